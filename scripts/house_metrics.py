"""The house in numbers (one door, typed trace, results/ and README size); the logic lives in
`benchmarks/house_metrics.py`."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.house_metrics import main

if __name__ == "__main__":
    raise SystemExit(main())
