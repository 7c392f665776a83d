"""Two readers side by side: EM and F1 per method from runs that differ only in `llm.model`, the
ratio of the first reader's score to the second's, and the paired difference on the same questions
with its 95% bootstrap interval and McNemar's exact p for EM. Runs must share their question sample and every
setting but the reader (checked from their config.yaml), or the ratio would measure something else.

The logic lives in `benchmarks/compare_readers.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.compare_readers import main

if __name__ == "__main__":
    raise SystemExit(main())
