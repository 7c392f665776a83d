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
  leaves out; `scripts/` files;
- the fourth pass (issue 81): `agent/`'s files, floors (the longest chain of imports inside it) and lines;
  the walk of a question from `EnrichRAG.ask` to the reader, taken from a run (`question_walk.py`: the
  stack at the first reader call, and the package functions and files entered before it); the public
  calls of the door, the CLI and the server's request models that do not say their arguments, return and
  raises; calls with more than three positional arguments; `bench_results/`'s files and bytes.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
OPENS = re.compile(r"\b(GraphStore|PassageStore|Resources|Session)\(")
BUILD_STAGES = ("stages/",)  # the offline build writes the stores the door later opens


def _py(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if ".venv" not in p.parts)


def stores_opened_outside_the_door(root: Path) -> list[str]:
    package, found = root / "enrich_rag", []
    for path in _py(package):
        rel = path.relative_to(package).as_posix()
        if rel in ("api.py", "resources.py") or rel.startswith(("storage/", *BUILD_STAGES)):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OPENS.search(line) and not line.lstrip().startswith(("class ", "def ", "#")):
                found.append(f"enrich_rag/{rel}:{number}")
    return found


def step_names(root: Path) -> list[str]:
    """The loop's step names as that checkout spells them (the enum's string values), read from its source."""
    for path in _py(root / "enrich_rag" / "agent"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ClassDef)
                and node.name in ("Tool", "StepKind")
                and any(isinstance(b, ast.Name) and b.id in ("StrEnum", "Enum") for b in node.bases)
            ):
                return [str(v.value.value) for v in node.body if isinstance(v, ast.Assign) and isinstance(v.value, ast.Constant)]
    return []


def step_names_read_outside_agent(root: Path) -> list[str]:
    alternatives = "|".join(step_names(root))
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


def agent_room(root: Path) -> dict[str, int]:
    """Files, lines, and floors: the longest chain of imports between `agent/`'s own modules."""
    folder = root / "enrich_rag" / "agent"
    files = _py(folder)
    names = {p.stem for p in files if p.stem != "__init__"}
    imports: dict[str, set[str]] = {}
    for path in files:
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level == 1:
                    found |= {module} if module else {a.name for a in node.names}
                elif module.startswith("enrich_rag.agent."):
                    found.add(module.split(".")[2])
                elif module == "enrich_rag.agent":
                    found |= {a.name for a in node.names}
        imports[path.stem] = (found & names) - {path.stem}
    depth: dict[str, int] = {}

    def floor(name: str, seen: frozenset[str] = frozenset()) -> int:
        if name not in depth:
            below = [floor(n, seen | {name}) for n in imports.get(name, ()) if n not in seen]
            depth[name] = 1 + max(below, default=0)
        return depth[name]

    return {
        "files": len(files),
        "floors": max((floor(n) for n in names), default=0),
        "lines": sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files),
    }


def question_walk(root: Path) -> dict[str, Any]:
    """The walk of one question from `EnrichRAG.ask` to the reader, taken from a run of the checkout's own
    package (`benchmarks/question_walk.py`, in a process of its own so that it imports that checkout)."""
    script = Path(__file__).with_name("question_walk.py")
    done = subprocess.run([sys.executable, str(script), "--root", str(root)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def long_positional_calls(root: Path) -> list[str]:
    """Calls to the package's own functions and classes that pass more than three arguments by position
    (`*args` calls left out): a reader has to open the callee to know what each one is."""
    package = _py(root / "enrich_rag")
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in package}
    defined = {
        n.name for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    found = []
    for path, tree in trees.items():
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            if name in defined and len(call.args) > 3 and not any(isinstance(a, ast.Starred) for a in call.args):
                found.append(f"{path.relative_to(root).as_posix()}:{call.lineno} {name}")
    return found


def _says(doc: str, *sections: str) -> bool:
    return all(f"{s}:" in doc for s in sections)


def undocumented_public_calls(root: Path) -> list[str]:
    """Public functions and methods of the door (`api.py`) whose docstring does not say its arguments
    (`Args:`), what it returns (`Returns:`) and what it raises (`Raises:`), where each applies; the CLI's
    options without help text; the server's request models' fields without a description."""
    missing = []
    api = root / "enrich_rag" / "api.py"
    for node in ast.walk(ast.parse(api.read_text(encoding="utf-8"))):
        if (
            not isinstance(node, ast.FunctionDef)
            or node.name.startswith("_")
            or any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list)
        ):
            continue
        doc = ast.get_docstring(node) or ""
        arguments = [a.arg for a in [*node.args.args, *node.args.kwonlyargs] if a.arg not in ("self", "cls")]
        arguments += [node.args.vararg.arg] if node.args.vararg else []
        gives = node.returns is not None and not (isinstance(node.returns, ast.Constant) and node.returns.value is None)
        needs = (["Args"] if arguments else []) + (["Returns"] if gives else [])
        if not doc or not _says(doc, *needs):
            missing.append(f"api.py:{node.name}")
    cli = root / "enrich_rag" / "cli" / "main.py"
    for node in ast.walk(ast.parse(cli.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and any("command" in ast.unparse(d) for d in node.decorator_list):
            defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + list(node.args.defaults)
            for argument, default in zip(node.args.args, defaults):
                declared = ast.unparse(argument.annotation or ast.Constant("")) + ast.unparse(default or ast.Constant(""))
                if "help=" not in declared and not ast.unparse(argument.annotation or ast.Constant("")).endswith("Option"):
                    missing.append(f"cli:{node.name}:{argument.arg}")
    for path in _py(root / "enrich_rag" / "serve"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == "BaseModel" for b in node.bases):
                for field in node.body:
                    if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) and field.target.id != "model_config":
                        if "description=" not in ast.unparse(field.value or ast.Constant("")):
                            missing.append(f"{path.name}:{node.name}.{field.target.id}")
    return missing


def tracked(root: Path, folder: str) -> dict[str, int]:
    files = subprocess.run(["git", "ls-files", folder], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    return {"files": len(files), "bytes": sum((root / f).stat().st_size for f in files if (root / f).is_file())}


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
        "agent_room": agent_room(root),
        "question_walk": question_walk(root),
        "undocumented_public_calls": undocumented_public_calls(root),
        "long_positional_calls": long_positional_calls(root),
        "bench_results": tracked(root, "bench_results"),
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
    room, walk = found["agent_room"], found["question_walk"]
    table.add_row("agent/: files, floors, lines", f"{room['files']}, {room['floors']}, {room['lines']}")
    table.add_row(
        "EnrichRAG.ask to the first reader call: stack depth; functions, files entered",
        f"{walk['depth']}; {walk['functions_entered']}, {walk['files_entered']}",
    )
    table.add_row("public calls without argument docs", str(len(found["undocumented_public_calls"])))
    table.add_row("calls with more than 3 positional arguments", str(len(found["long_positional_calls"])))
    table.add_row("bench_results/: files, MB", f"{found['bench_results']['files']}, {found['bench_results']['bytes'] / 1e6:.1f}")
    Console().print(table)
    kept = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    out.write_text(json.dumps(kept | {args.label: found}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
