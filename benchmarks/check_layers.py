"""Import layering of the package: every arrow points down (or within a room), none back up, and no
two modules import each other in a circle.

Rooms, lowest first; a room may import rooms of a lower rank only (and itself). Rooms that share a
rank are siblings and may not import each other. Lazy imports inside functions count too, and so does
`from enrich_rag import x` (the room `x`, or the package's front door). Inside a room, modules may
import each other only without a circle (a lazy import that closes one hides a tangle, not removes it).

    python scripts/check_layers.py            # prints the import edges per room; exit 1 on an upward arrow or a circle
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "enrich_rag"
RANKS = {
    "errors": 0,
    "text": 0,  # shared vocabulary: the ground floor
    "config": 1,
    "config_reference": 2,  # the generated configuration reference
    "storage": 2,
    "ingest": 2,  # Parquet graph, passages, DVC, atomic writes; reading input files
    "index": 3,
    "extract": 3,
    "llm": 3,  # engines: txtai, extractors, language models
    "stages": 4,
    "evidence": 5,  # search, the graph walk, and what the reader reads
    "resources": 6,  # what a project keeps open: stores, indexes, models, the search objects built once
    "agent": 7,  # the four tools and the loop
    "api": 8,  # EnrichRAG: the one door to a project's stores and loop
    "eval": 9,
    "serve": 9,  # interfaces and the evaluation, each through the door
    "cli": 10,
    "__init__": 11,  # the package's front door re-exports the API (lazily)
}


def room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "enrich_rag" else None


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[tuple[str, int]]:
    """(module, line) of each enrich_rag import in a file; `from enrich_rag[.pkg] import x` names x
    when x is a module or package of its own."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.startswith("enrich_rag")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "enrich_rag":
            base = PACKAGE.parent.joinpath(*node.module.split("."))
            subs = [
                f"{node.module}.{a.name}"
                for a in node.names
                if (base / f"{a.name}.py").is_file() or (base / a.name / "__init__.py").is_file()
            ]
            found += [(m, node.lineno) for m in subs or [node.module]]
    return found


def _room_of(module: str) -> str | None:
    return room(module) or ("__init__" if module == "enrich_rag" else None)


def import_edges() -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent)
        source = room(".".join(rel.with_suffix("").parts))
        if source is None:
            continue
        for module, line in imported_modules(path):
            target = _room_of(module)
            if target and target != source:
                edges[(source, target)].append(f"{rel}:{line}")
    return edges


def circles() -> list[list[str]]:
    """Import circles between modules of the package (each reported once, from its smallest module)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _module(path)
        for module, _ in imported_modules(path):
            # A package's __init__ is what `import enrich_rag.x.y` runs first: not an arrow of its own.
            if module != source and not source.startswith(module + "."):
                graph[source].add(module)
    found: dict[frozenset[str], list[str]] = {}

    def walk(node: str, trail: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == trail[0]:
                found.setdefault(frozenset(trail), trail + [nxt])
            elif nxt not in trail and nxt > trail[0]:
                walk(nxt, trail + [nxt])

    for start in sorted(graph):
        walk(start, [start])
    return sorted(found.values())


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
        print(f"UNKNOWN room '{r}': give it a rank in benchmarks/check_layers.py", file=sys.stderr)
    loops = circles()
    for loop in loops:
        print(f"CIRCLE: {' -> '.join(loop)}", file=sys.stderr)
    return 1 if bad or unknown or loops else 0


if __name__ == "__main__":
    sys.exit(main())
