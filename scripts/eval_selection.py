"""Supporting-passage precision@k / recall@k of evidence selection alone, no LLM (seconds, not an hour).

The logic lives in `enrich_rag/bench/eval_selection.py`; `--help` lists the options."""

from enrich_rag.bench.eval_selection import main

if __name__ == "__main__":
    raise SystemExit(main())
