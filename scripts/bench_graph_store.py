"""Benchmark: 1-hop neighbours of 50 seed ids, and one question's PageRank walk, over a synthetic
5M-edge Parquet graph (1M entities, 2M entity-passage links over 500k passages).

The logic lives in `benchmarks/graph_store.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.graph_store import main

if __name__ == "__main__":
    raise SystemExit(main())
