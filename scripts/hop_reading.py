"""Bridge questions read a hop at a time vs at once, over their gold passages.

The logic lives in `enrich_rag/bench/hop_reading.py`; `--help` lists the options."""

from enrich_rag.bench.hop_reading import main

if __name__ == "__main__":
    raise SystemExit(main())
