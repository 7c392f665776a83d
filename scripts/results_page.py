"""Write docs/results.md, the README's what-to-expect table and loop diagram (drawn from `agent/loop.py`'s
`STAGES`), and the find and against-peers tables of docs/finding.md and docs/peers.md, from
results/**/metrics.json and bench_results/*.json (`--check`: fail if any differs from what the files give). The archive of
superseded runs (docs/results-archive.md) is frozen: their folders live in git history.

All read only the files git tracks (all of them outside a git checkout): a run of your own that you
have not committed neither appears on the pages nor makes the check fail."""

import argparse
import subprocess
import sys
from pathlib import Path

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.expectations import readme_with, what_to_expect
from benchmarks.find_report import find_block
from benchmarks.loop_diagram import diagram_block
from benchmarks.results_page import peers_block, render
from enrich_rag.storage.atomic import write_or_check

ROOT = Path(__file__).resolve().parents[1]
REGENERATE = "python scripts/results_page.py"


def committed(root: Path) -> frozenset[str] | None:
    listed = subprocess.run(["git", "ls-files", "results", "bench_results"], cwd=root, capture_output=True, text=True)
    return frozenset(listed.stdout.splitlines()) if listed.returncode == 0 else None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated page is not what the files give")
    check = parser.parse_args().check
    only = committed(ROOT)
    readme = readme_with((ROOT / "README.md").read_text(encoding="utf-8"), what_to_expect(ROOT, only))
    finding = readme_with((ROOT / "docs/finding.md").read_text(encoding="utf-8"), find_block(ROOT, only), "find")
    peers = readme_with((ROOT / "docs/peers.md").read_text(encoding="utf-8"), peers_block(ROOT, only), "peers")
    failed = [
        write_or_check(ROOT / "docs/results.md", render(ROOT, only), check, REGENERATE),
        write_or_check(ROOT / "README.md", readme_with(readme, diagram_block(), "loop"), check, REGENERATE),
        write_or_check(ROOT / "docs/finding.md", finding, check, REGENERATE),
        write_or_check(ROOT / "docs/peers.md", peers, check, REGENERATE),
    ]
    sys.exit(max(failed))
