"""How well the graph ranks passages, read from an evaluation run: recall@k and all-evidence@k of
PageRank's top passages (the `pagerank_top` each graph method records per round), before and after
that question's enrichment.

The logic lives in `benchmarks/graph_recall.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.graph_recall import main

if __name__ == "__main__":
    raise SystemExit(main())
