"""Two evaluation runs of one method on the same questions: each score and the paired difference.

The logic lives in `enrich_rag/bench/compare_runs.py`; `--help` lists the options."""

from enrich_rag.bench.compare_runs import main

if __name__ == "__main__":
    raise SystemExit(main())
