"""Write docs/configuration.md from the config dataclasses (`--check`: exit 1 when it differs)."""

import argparse
import sys
from pathlib import Path

from enrich_rag.config_reference import render
from enrich_rag.storage.atomic import atomic_file

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs/configuration.md"

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/configuration.md is not what the code gives")
    args = parser.parse_args()
    page = render()
    if args.check:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != page:
            print(f"{PAGE.relative_to(ROOT)} differs from enrich_rag/config.py: run python scripts/config_reference.py", file=sys.stderr)
            sys.exit(1)
        sys.exit(0)
    with atomic_file(PAGE) as tmp:
        tmp.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
