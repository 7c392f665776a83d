"""Import layering of the package: every arrow points down (or within a room), none back up.

The logic lives in `benchmarks/check_layers.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.check_layers import main

if __name__ == "__main__":
    raise SystemExit(main())
