"""Where the hop loop's chains hold and break, against MuSiQue's gold chains, read from an evaluation run.

The logic lives in `benchmarks/hop_chains.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.hop_chains import main

if __name__ == "__main__":
    raise SystemExit(main())
