"""Memory of `enrich-rag serve` with 1 and with 4 worker processes.

The logic lives in `benchmarks/serve_processes.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.serve_processes import main

if __name__ == "__main__":
    raise SystemExit(main())
