"""Pick the demo's enrichment question from an evaluation run (wrong on the seed graph, right after enrichment).

The logic lives in `benchmarks/pick_demo_question.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.pick_demo_question import main

if __name__ == "__main__":
    raise SystemExit(main())
