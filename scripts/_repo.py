"""Puts the repository root on `sys.path`: the benchmarks (`benchmarks/`) ship with the repository, not
in the installed package, and the scripts here are their entry points."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
