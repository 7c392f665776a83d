"""Parallel writers: several `enrich-rag enrich` processes at once on one graph, several rounds.

The logic lives in `benchmarks/parallel_writers.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.parallel_writers import main

if __name__ == "__main__":
    raise SystemExit(main())
