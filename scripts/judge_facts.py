"""Precision of deep-extracted facts, judged against their sentence by the reader model (calibrated on gold).

The logic lives in `benchmarks/judge_facts.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.judge_facts import main

if __name__ == "__main__":
    raise SystemExit(main())
