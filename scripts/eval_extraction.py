"""Extraction quality against gold: the recall of 2WikiMultihopQA's evidence triples among the facts
each extractor writes from the questions' gold passages, and its cost per chunk.

The logic lives in `benchmarks/eval_extraction.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.eval_extraction import main

if __name__ == "__main__":
    raise SystemExit(main())
