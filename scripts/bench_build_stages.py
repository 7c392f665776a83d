"""Benchmark: the bundled build, stage by stage, in a temp folder (wall seconds, peak RSS).

The logic lives in `benchmarks/build_stages.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.build_stages import main

if __name__ == "__main__":
    raise SystemExit(main())
