"""How far the LLM judge's "correct" agrees with exact match, on answers an evaluation already made.

The logic lives in `enrich_rag/bench/calibrate_judge.py`; `--help` lists the options."""

from enrich_rag.bench.calibrate_judge import main

if __name__ == "__main__":
    raise SystemExit(main())
