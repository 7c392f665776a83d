"""A chain's answer, its last hop's against one final read over what the chain found, on a run's chains.

The logic lives in `benchmarks/chain_composition.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.chain_composition import main

if __name__ == "__main__":
    main()
