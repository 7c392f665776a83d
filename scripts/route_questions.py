"""The router as a classifier, and what it would have done to committed runs; the logic lives in
`benchmarks/route_questions.py` (`--help` lists the options)."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.route_questions import main

if __name__ == "__main__":
    raise SystemExit(main())
