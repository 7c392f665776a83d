"""The dev questions the query analysis calls comparisons.

The logic lives in `benchmarks/comparison_questions.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.comparison_questions import main

if __name__ == "__main__":
    raise SystemExit(main())
