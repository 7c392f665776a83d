"""Throughput of the offline build's two map steps (extraction, embedding) on the local engine and on
Ray with 1 and 2 workers, from the project's chunks. The first N chunks are copied to a temp file;
the project's build is not touched.

The logic lives in `benchmarks/build_scaling.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.build_scaling import main

if __name__ == "__main__":
    raise SystemExit(main())
