"""A newcomer's first hour, timed: a fresh clone, the README's two commands, then your own folder.

The logic lives in `benchmarks/newcomer.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.newcomer import main

if __name__ == "__main__":
    raise SystemExit(main())
