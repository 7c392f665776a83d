"""The hop loop's time on each dev set, quiet, without enrichment, by the plan's kind.

The logic lives in `benchmarks/hop_latency.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.hop_latency import main

if __name__ == "__main__":
    raise SystemExit(main())
