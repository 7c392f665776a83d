"""Own documents: build a folder of markdown, serve it warm, ask its written-down questions (read-only,
then with the token).

The logic lives in `benchmarks/own_documents.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.own_documents import main

if __name__ == "__main__":
    raise SystemExit(main())
