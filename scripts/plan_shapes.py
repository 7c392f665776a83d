"""The planner alone on each bundled dev set: multi-hop questions planned as chains, single-hop as one hop.

The logic lives in `benchmarks/plan_shapes.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.plan_shapes import main

if __name__ == "__main__":
    raise SystemExit(main())
