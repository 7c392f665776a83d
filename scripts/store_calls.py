"""The store and index calls a question makes, per round and by tool, on a built dataset (a stub reader).

The logic lives in `benchmarks/store_calls.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.store_calls import main

if __name__ == "__main__":
    raise SystemExit(main())
