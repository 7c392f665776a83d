"""Fault injection: SIGKILL a writer at random moments, restart, and check consistency.

The logic lives in `benchmarks/fault_injection.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.fault_injection import main

if __name__ == "__main__":
    raise SystemExit(main())
