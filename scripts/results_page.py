"""Write docs/results.md from results/**/metrics.json and bench_results/*.json (`--check`: fail if it differs)."""

import argparse
import sys
from pathlib import Path

from enrich_rag.eval.results_page import render
from enrich_rag.storage.atomic import write_or_check

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/results.md is not what the files give")
    sys.exit(write_or_check(ROOT / "docs/results.md", render(ROOT), parser.parse_args().check, "python scripts/results_page.py"))
