"""Import layering of the package: every arrow points down (or within a room), none back up.

Rooms, lowest first; a room may import rooms of a lower rank only (and itself). Rooms that share a
rank are siblings and may not import each other. Lazy imports inside functions count too.

    python scripts/check_layers.py            # prints the import edges per room; exit 1 on an upward arrow
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "enrich_rag"
RANKS = {
    "errors": 0, "text": 0,              # shared vocabulary: the ground floor
    "config": 1,
    "config_reference": 2,               # the generated configuration reference
    "storage": 2, "ingest": 2,           # Parquet graph, passages, DVC, atomic writes; reading input files
    "index": 3, "extract": 3, "llm": 3,  # engines: txtai, extractors, language models
    "stages": 4, "evidence": 4,          # the offline build; evidence selection
    "agent": 5,                          # the four tools and the loop
    "eval": 6, "serve": 6,               # interfaces
    "api": 7,                            # the Python API (EnrichRAG)
    "cli": 8,
    "__init__": 9,                       # the package's front door re-exports the API (lazily)
}


def room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "enrich_rag" else None


def import_edges() -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent)
        source = room(".".join(rel.with_suffix("").parts))
        if source is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                target = room(name)
                if target and target != source:
                    edges[(source, target)].append(f"{rel}:{node.lineno}")
    return edges


def main() -> int:
    edges = import_edges()
    unknown = sorted({r for pair in edges for r in pair if r not in RANKS})
    bad = [(s, t) for s, t in edges if s in RANKS and t in RANKS and RANKS[s] <= RANKS[t]]
    by_source: dict[str, list[str]] = defaultdict(list)
    for s, t in sorted(edges):
        by_source[s].append(t)
    for source in sorted(by_source, key=lambda r: (RANKS.get(r, 99), r)):
        print(f"{source:9s} -> {', '.join(sorted(by_source[source], key=lambda r: (RANKS.get(r, 99), r)))}")
    for s, t in bad:
        print(f"UPWARD: {s} (rank {RANKS[s]}) imports {t} (rank {RANKS[t]}) at {', '.join(edges[(s, t)][:3])}", file=sys.stderr)
    for r in unknown:
        print(f"UNKNOWN room '{r}': give it a rank in scripts/check_layers.py", file=sys.stderr)
    return 1 if bad or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
