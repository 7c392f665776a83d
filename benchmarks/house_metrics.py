"""The house in numbers: what the one-door, typed-trace and lab-notebook issues are judged by, counted from
the tree as it is.

    python -m benchmarks house_metrics                                  # this checkout, labelled "now"
    python -m benchmarks house_metrics --root ../old-checkout --label fcd7caf   # another commit's tree, same counts

- places in the package outside the door (`api.py`) and the storage room that open a store or build the
  resources an agent runs on;
- string literals naming a loop step read outside `agent/` (package, benchmarks, scripts, page script);
- the longest function in `agent/` and in `serve/`;
- `results/`: tracked files, run folders (a `metrics.json` each) and bytes; README lines;
- the loop's hub: `Agent`'s methods and lines, and the names `agent/loop.py` imports;
- settings: fields of the config's sections (less `paths` and the per-run `eval`), and those params.yaml
  leaves out; `scripts/` files.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.agent.records import Tool

ROOT = Path(__file__).resolve().parents[1]
OPENS = re.compile(r"\b(GraphStore|PassageStore|Resources|Session)\(")
BUILD_STAGES = ("stages/",)  # the offline build writes the stores the door later opens


def _py(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if ".venv" not in p.parts)


def stores_opened_outside_the_door(root: Path) -> list[str]:
    package, found = root / "enrich_rag", []
    for path in _py(package):
        rel = path.relative_to(package).as_posix()
        if rel in ("api.py", "agent/resources.py") or rel.startswith(("storage/", *BUILD_STAGES)):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OPENS.search(line) and not line.lstrip().startswith(("class ", "def ", "#")):
                found.append(f"enrich_rag/{rel}:{number}")
    return found


def step_names_read_outside_agent(root: Path) -> list[str]:
    alternatives = "|".join(t.value for t in Tool)
    names = re.compile(rf"""(["'])({alternatives})\1""")  # a literal: the same quote on both sides
    package = root / "enrich_rag"
    files = [*_py(package), *_py(root / "benchmarks"), *_py(root / "scripts"), *sorted((package / "serve/static").glob("*.js"))]
    found = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        if rel.startswith("enrich_rag/agent/"):
            continue
        found += [f"{rel}:{n}" for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if names.search(line)]
    return found


def longest_function(root: Path, room: str) -> dict[str, Any]:
    name, longest = "", 0
    for path in _py(root / "enrich_rag" / room):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > longest:
                    name, longest = f"{path.relative_to(root).as_posix()}:{node.name}", lines
    return {"function": name, "lines": longest}


def results_tree(root: Path) -> dict[str, int]:
    tracked = subprocess.run(["git", "ls-files", "results"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    return {
        "files": len(tracked),
        "run_folders": sum(1 for f in tracked if f.endswith("/metrics.json")),
        "bytes": sum((root / f).stat().st_size for f in tracked if (root / f).is_file()),
    }


def agent_class(root: Path) -> dict[str, int]:
    tree = ast.parse((root / "enrich_rag/agent/loop.py").read_text(encoding="utf-8"))
    agent = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Agent")
    methods = [n for n in agent.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    imported = sum(len(n.names) for n in tree.body if isinstance(n, ast.ImportFrom | ast.Import))
    return {"methods": len(methods), "lines": (agent.end_lineno or 0) - agent.lineno + 1, "loop_imports": imported}


def settings(root: Path) -> dict[str, Any]:
    """Fields of the config's dataclasses by section (read from config.py's source, so another checkout
    is counted as it is), and the ones params.yaml does not name."""
    import yaml

    tree = ast.parse((root / "enrich_rag/config.py").read_text(encoding="utf-8"))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    top = classes["Config"]
    sections = {
        f.target.id: f.annotation.id
        for f in top.body
        if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name) and isinstance(f.annotation, ast.Name)
    }
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    fields, missing = 0, []
    for section, cls in sections.items():
        if section in ("paths", "eval") or cls not in classes:
            continue
        names = [f.target.id for f in classes[cls].body if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name)]
        fields += len(names)
        missing += [f"{section}.{n}" for n in names if n not in (params.get(section) or {})]
    return {"count": fields, "not_in_params_yaml": missing}


def measure(root: Path) -> dict[str, Any]:
    return {
        "agent": agent_class(root),
        "settings": settings(root),
        "scripts_files": len([p for p in (root / "scripts").iterdir() if p.is_file()]),
        "stores_opened_outside_the_door": stores_opened_outside_the_door(root),
        "step_names_read_outside_agent": step_names_read_outside_agent(root),
        "longest_function": {"agent": longest_function(root, "agent"), "serve": longest_function(root, "serve")},
        "results": results_tree(root),
        "readme_lines": len((root / "README.md").read_text(encoding="utf-8").splitlines()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to count (default: this one)")
    parser.add_argument("--label", default="now", help="its name in the JSON (a commit)")
    parser.add_argument("--out", default="bench_results/house_metrics.json")
    args = parser.parse_args()
    out = ROOT / args.out
    found = measure(args.root.resolve())
    table = Table(title=f"the house at {args.label}")
    table.add_column("what")
    table.add_column("measured", justify="right")
    table.add_row("places opening a store outside the door", str(len(found["stores_opened_outside_the_door"])))
    table.add_row("step-name literals read outside agent/", str(len(found["step_names_read_outside_agent"])))
    for room, longest in found["longest_function"].items():
        table.add_row(f"longest function in {room}/", f"{longest['lines']} ({longest['function']})")
    table.add_row(
        "results/: files, run folders, MB",
        f"{found['results']['files']}, {found['results']['run_folders']}, {found['results']['bytes'] / 1e6:.1f}",
    )
    table.add_row("README lines", str(found["readme_lines"]))
    table.add_row(
        "Agent: methods, lines; names loop.py imports",
        f"{found['agent']['methods']}, {found['agent']['lines']}; {found['agent']['loop_imports']}",
    )
    table.add_row("settings; not in params.yaml", f"{found['settings']['count']}; {len(found['settings']['not_in_params_yaml'])}")
    table.add_row("scripts/ files", str(found["scripts_files"]))
    Console().print(table)
    kept = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    out.write_text(json.dumps(kept | {args.label: found}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
