"""Calibrate agent.ppl_threshold on bundled dev questions (no enrichment, the graph is not written).

The logic lives in `benchmarks/calibrate_threshold.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.calibrate_threshold import main

if __name__ == "__main__":
    raise SystemExit(main())
