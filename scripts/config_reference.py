"""Write docs/configuration.md from the config dataclasses (`--check`: exit 1 when it differs)."""

import argparse
import sys
from pathlib import Path

from enrich_rag.config_reference import render
from enrich_rag.storage.atomic import write_or_check

PAGE = Path(__file__).resolve().parents[1] / "docs/configuration.md"

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/configuration.md is not what the code gives")
    sys.exit(write_or_check(PAGE, render(), parser.parse_args().check, "python scripts/config_reference.py"))
