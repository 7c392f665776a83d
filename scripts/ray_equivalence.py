"""The Ray build against the local build on a real corpus: the seed graph's node, edge and link rows
must be set-equal. Both write into a temp folder; the project's build is not touched.

The logic lives in `benchmarks/ray_equivalence.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.ray_equivalence import main

if __name__ == "__main__":
    raise SystemExit(main())
