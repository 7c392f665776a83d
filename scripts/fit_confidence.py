"""Fit the wrong-answer model on committed dev predictions; AUROC and calibration on questions not fitted on.

The logic lives in `benchmarks/fit_confidence.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.fit_confidence import main

if __name__ == "__main__":
    raise SystemExit(main())
