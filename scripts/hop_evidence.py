"""Where a hop's gold paragraph stands under each ranker, and the reader over it alone, from a MuSiQue run.

The logic lives in `benchmarks/hop_evidence.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.hop_evidence import main

if __name__ == "__main__":
    raise SystemExit(main())
