"""Entity-first ranking overhead (spec 003: < 50 ms per 100 chunks), and the whole selection step.

The logic lives in `enrich_rag/bench/entity_ranker.py`; `--help` lists the options."""

from enrich_rag.bench.entity_ranker import main

if __name__ == "__main__":
    raise SystemExit(main())
