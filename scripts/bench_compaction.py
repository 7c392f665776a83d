"""Benchmark: a graph grown by 1,000 enrichment-sized partitions, before and after `graph compact`:
store open time and per-question read p50 against a one-partition graph of the same rows.

The logic lives in `enrich_rag/bench/compaction.py`; `--help` lists the options."""

from enrich_rag.bench.compaction import main

if __name__ == "__main__":
    raise SystemExit(main())
