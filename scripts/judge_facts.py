"""Precision of deep-extracted facts, judged against their sentence by the reader model (calibrated on gold).

The logic lives in `enrich_rag/bench/judge_facts.py`; `--help` lists the options."""

from enrich_rag.bench.judge_facts import main

if __name__ == "__main__":
    raise SystemExit(main())
