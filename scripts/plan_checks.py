"""The plans the loop refuses, replayed on committed runs; the logic lives in `benchmarks/plan_checks.py`
(`--help` lists the options)."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.plan_checks import main

if __name__ == "__main__":
    raise SystemExit(main())
