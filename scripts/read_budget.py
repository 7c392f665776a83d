"""What each reader call of the hop loop buys, replayed on committed runs; the logic lives in
`benchmarks/read_budget.py` (`--help` lists the options)."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.read_budget import main

if __name__ == "__main__":
    raise SystemExit(main())
