"""Calibrate agent.ppl_threshold on bundled dev questions (no enrichment, the graph is not written).

The logic lives in `enrich_rag/bench/calibrate_threshold.py`; `--help` lists the options."""

from enrich_rag.bench.calibrate_threshold import main

if __name__ == "__main__":
    raise SystemExit(main())
