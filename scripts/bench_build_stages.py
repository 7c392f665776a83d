"""Benchmark: the bundled build, stage by stage, in a temp folder (wall seconds, peak RSS).

The logic lives in `enrich_rag/bench/build_stages.py`; `--help` lists the options."""

from enrich_rag.bench.build_stages import main

if __name__ == "__main__":
    raise SystemExit(main())
