"""Bridge questions read a hop at a time vs at once, over their gold passages.

The logic lives in `benchmarks/hop_reading.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.hop_reading import main

if __name__ == "__main__":
    raise SystemExit(main())
