"""Benchmark: the graph store opened by one process, then by several at once (open time, reads, RSS, Pss).

The logic lives in `benchmarks/store_sharing.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.store_sharing import main

if __name__ == "__main__":
    raise SystemExit(main())
