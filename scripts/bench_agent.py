"""Benchmark the agent loop: p50/p95 latency per tool and end to end over bundled HotpotQA questions,
without enrichment and with exactly one enrichment round; and graph-index upsert vs full rebuild
for 100 new nodes. Runs on a copy of the built data (the real graph is never written).

The logic lives in `benchmarks/agent.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.agent import main

if __name__ == "__main__":
    raise SystemExit(main())
