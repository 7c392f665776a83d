"""A plain pip install of a fresh clone: core only, a folder, one question; then the extras its error names.

The logic lives in `benchmarks/plain_install.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.plain_install import main

if __name__ == "__main__":
    raise SystemExit(main())
