"""Add 50 documents to the bundled build, then remove 10, and ask about them.

The logic lives in `benchmarks/corpus_update.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.corpus_update import main

if __name__ == "__main__":
    raise SystemExit(main())
