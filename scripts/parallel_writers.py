"""Parallel writers: several `enrich-rag enrich` processes at once on one graph, several rounds.

The logic lives in `enrich_rag/bench/parallel_writers.py`; `--help` lists the options."""

from enrich_rag.bench.parallel_writers import main

if __name__ == "__main__":
    raise SystemExit(main())
