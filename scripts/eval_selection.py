"""Supporting-passage precision@k / recall@k of evidence selection alone, no LLM (seconds, not an hour).

The logic lives in `benchmarks/eval_selection.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.eval_selection import main

if __name__ == "__main__":
    raise SystemExit(main())
