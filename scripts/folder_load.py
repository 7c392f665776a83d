"""Load on a served folder of documents, cold and warm.

The logic lives in `benchmarks/folder_load.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.folder_load import main

if __name__ == "__main__":
    raise SystemExit(main())
