"""Load test of the web service: concurrent clients asking, on one server with the default reader.

The logic lives in `enrich_rag/bench/load_test.py`; `--help` lists the options."""

from enrich_rag.bench.load_test import main

if __name__ == "__main__":
    raise SystemExit(main())
