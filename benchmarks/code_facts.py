"""Facts about the code of a checkout: lines of the installed package (and of any benchmarks inside it),
the places that build an `Agent`, and the longest functions of `agent/`.

    python -m benchmarks code_facts [--root PATH] [--out bench_results/code_facts.json]

`--root` may name another checkout (a `git worktree` of an older commit) to compare before and after.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

PACKAGE = "enrich_rag"
BENCH_IN_PACKAGE = "enrich_rag/bench"  # where benchmarks lived before they moved to benchmarks/
LONGEST = 5


def _lines(paths: list[Path]) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths)


def _python(root: Path, folder: str) -> list[Path]:
    return sorted((root / folder).rglob("*.py")) if (root / folder).is_dir() else []


def agent_builders(root: Path, folders: tuple[str, ...]) -> list[str]:
    """`file:line` of every call `Agent(...)` in these folders (the class itself excluded)."""
    found = []
    for folder in folders:
        paths = [root / folder] if folder.endswith(".py") else _python(root, folder)
        for path in paths:
            if not path.is_file():
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Agent":
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def longest_functions(root: Path, folder: str, top: int = LONGEST) -> list[dict[str, Any]]:
    functions: list[dict[str, Any]] = []
    for path in _python(root, folder):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                functions.append({"function": f"{path.relative_to(root)}:{node.name}", "lines": length})
    return sorted(functions, key=lambda f: -int(f["lines"]))[:top]


def facts(root: Path) -> dict[str, Any]:
    package = _python(root, PACKAGE)
    bench = [p for p in package if p.is_relative_to(root / BENCH_IN_PACKAGE)]
    outside = ("benchmarks", "scripts", "examples", "run_evaluation.py")
    return {
        "package_lines": _lines(package),
        "package_lines_without_benchmarks": _lines([p for p in package if p not in bench]),
        "benchmark_lines_in_package": _lines(bench),
        "benchmark_lines_outside_package": _lines(_python(root, "benchmarks")),
        "agent_built_at": {"package": agent_builders(root, (PACKAGE,)), "beside it": agent_builders(root, outside)},
        "longest_in_agent": longest_functions(root, f"{PACKAGE}/agent"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    found = facts(Path(args.root).resolve())
    table = Table(title=f"code facts: {args.root}")
    table.add_column("fact")
    table.add_column("value")
    for key, value in found.items():
        table.add_row(key, json.dumps(value) if not isinstance(value, int) else f"{value:,}")
    Console().print(table)
    if args.out:
        Path(args.out).write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")
    return 0
