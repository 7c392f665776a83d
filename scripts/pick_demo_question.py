"""Pick the demo's enrichment question from an evaluation run (wrong on the seed graph, right after enrichment).

The logic lives in `enrich_rag/bench/pick_demo_question.py`; `--help` lists the options."""

from enrich_rag.bench.pick_demo_question import main

if __name__ == "__main__":
    raise SystemExit(main())
