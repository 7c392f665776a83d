"""How fast the default reader reads and writes, by thread count.

The logic lives in `benchmarks/reader_speed.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.reader_speed import main

if __name__ == "__main__":
    raise SystemExit(main())
