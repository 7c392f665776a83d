"""Examples of a generated test set, N of each type, as a table to read and a JSON beside it: what a
user checks before trusting a synthetic set to rank settings.

The logic lives in `benchmarks/testset_examples.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.testset_examples import main

if __name__ == "__main__":
    raise SystemExit(main())
