"""Benchmark: a graph grown by 1,000 enrichment-sized partitions, before and after `graph compact`:
store open time and per-question read p50 against a one-partition graph of the same rows.

The logic lives in `benchmarks/compaction.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.compaction import main

if __name__ == "__main__":
    raise SystemExit(main())
