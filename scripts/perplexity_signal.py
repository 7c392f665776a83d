"""What the reader's perplexity says about a right answer: AUROC per method and the keep rules.

The logic lives in `benchmarks/perplexity_signal.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.perplexity_signal import main

if __name__ == "__main__":
    raise SystemExit(main())
