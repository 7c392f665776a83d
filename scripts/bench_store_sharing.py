"""Benchmark: the graph store opened by one process, then by several at once (open time, reads, RSS, Pss).

The logic lives in `enrich_rag/bench/store_sharing.py`; `--help` lists the options."""

from enrich_rag.bench.store_sharing import main

if __name__ == "__main__":
    raise SystemExit(main())
