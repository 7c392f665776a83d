"""Fault injection: SIGKILL a writer at random moments, restart, and check consistency.

The logic lives in `enrich_rag/bench/fault_injection.py`; `--help` lists the options."""

from enrich_rag.bench.fault_injection import main

if __name__ == "__main__":
    raise SystemExit(main())
