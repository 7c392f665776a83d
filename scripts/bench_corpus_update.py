"""Add 50 documents to the bundled build, then remove 10, and ask about them.

The logic lives in `enrich_rag/bench/corpus_update.py`; `--help` lists the options."""

from enrich_rag.bench.corpus_update import main

if __name__ == "__main__":
    raise SystemExit(main())
