"""A newcomer's first hour, timed: a fresh clone, the README's two commands, then your own folder.

The logic lives in `enrich_rag/bench/newcomer.py`; `--help` lists the options."""

from enrich_rag.bench.newcomer import main

if __name__ == "__main__":
    raise SystemExit(main())
