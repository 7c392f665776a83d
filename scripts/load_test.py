"""Load test of the web service: concurrent clients asking, on one server with the default reader.

The logic lives in `benchmarks/load_test.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.load_test import main

if __name__ == "__main__":
    raise SystemExit(main())
