"""Entity-first ranking overhead (the entity-first ranker spec, context/README.md: < 50 ms per 100 chunks), and the whole selection step.

The logic lives in `benchmarks/entity_ranker.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.entity_ranker import main

if __name__ == "__main__":
    raise SystemExit(main())
