"""Memory of `enrich-rag serve` with 1 and with 4 worker processes.

The logic lives in `enrich_rag/bench/serve_processes.py`; `--help` lists the options."""

from enrich_rag.bench.serve_processes import main

if __name__ == "__main__":
    raise SystemExit(main())
