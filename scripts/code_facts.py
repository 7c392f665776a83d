"""Facts about the code of a checkout: package lines, where an `Agent` is built, the longest functions of `agent/`.

The logic lives in `benchmarks/code_facts.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.code_facts import main

if __name__ == "__main__":
    raise SystemExit(main())
