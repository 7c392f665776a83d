"""Two evaluation runs of one method on the same questions: each score and the paired difference.

The logic lives in `benchmarks/compare_runs.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.compare_runs import main

if __name__ == "__main__":
    raise SystemExit(main())
