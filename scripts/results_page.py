"""Write docs/results.md from results/**/metrics.json and bench_results/*.json (`--check`: fail if it differs).

Both read only the files git tracks (all of them outside a git checkout): a run of your own that you
have not committed neither appears on the page nor makes the check fail."""

import argparse
import subprocess
import sys
from pathlib import Path

from enrich_rag.eval.results_page import render
from enrich_rag.storage.atomic import write_or_check

ROOT = Path(__file__).resolve().parents[1]


def committed(root: Path) -> frozenset[str] | None:
    listed = subprocess.run(["git", "ls-files", "results", "bench_results"], cwd=root, capture_output=True, text=True)
    return frozenset(listed.stdout.splitlines()) if listed.returncode == 0 else None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/results.md is not what the files give")
    page = render(ROOT, committed(ROOT))
    sys.exit(write_or_check(ROOT / "docs/results.md", page, parser.parse_args().check, "python scripts/results_page.py"))
