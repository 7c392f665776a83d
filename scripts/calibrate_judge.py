"""How far the LLM judge's "correct" agrees with exact match, on answers an evaluation already made.

The logic lives in `benchmarks/calibrate_judge.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.calibrate_judge import main

if __name__ == "__main__":
    raise SystemExit(main())
