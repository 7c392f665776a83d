"""What the reader's perplexity says about a right answer: AUROC per method and the keep rules.

The logic lives in `enrich_rag/bench/perplexity_signal.py`; `--help` lists the options."""

from enrich_rag.bench.perplexity_signal import main

if __name__ == "__main__":
    raise SystemExit(main())
