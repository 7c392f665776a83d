"""Does a synthetic test set rank methods like the real one? Spearman's rho between two evaluation
runs' method rankings, per metric, with a bootstrap interval: 100 questions leave methods a few
points apart tied within noise, and rho over six methods moves a lot with one swap. Within each set,
each step of its ranking comes with the paired difference of the two methods (same questions) and its
95% interval, so a step inside its interval reads as a tie, not an order.

The logic lives in `benchmarks/compare_rankings.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.compare_rankings import main

if __name__ == "__main__":
    raise SystemExit(main())
