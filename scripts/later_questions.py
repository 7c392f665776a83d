"""What the graph's growth pays on the questions that come after (related-question streams).

The logic lives in `benchmarks/later_questions.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.later_questions import main

if __name__ == "__main__":
    raise SystemExit(main())
