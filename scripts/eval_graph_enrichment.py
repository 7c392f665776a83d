"""Does enrichment move retrieval? PageRank recall on a shallow seed, with targeted enrichment, with a
random control, and on the full graph: retrieval only, no reader, one fixed question order.

The logic lives in `benchmarks/eval_graph_enrichment.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.eval_graph_enrichment import main

if __name__ == "__main__":
    raise SystemExit(main())
