"""`python -m benchmarks NAME [options]`: run the benchmark `benchmarks/NAME.py` (its `--help` lists its
options); `python -m benchmarks` lists them, each with the first line of its docstring."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def runnable() -> dict[str, str]:
    """Each module with a `main`, by name: its docstring's first line (read, not imported)."""
    found = {}
    for path in sorted(HERE.glob("*.py")):
        if path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body):
            found[path.stem] = (ast.get_docstring(tree) or "").split("\n")[0]
    return found


def main() -> int:
    names = runnable()
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        width = max(map(len, names))
        print("usage: python -m benchmarks NAME [options]   (python -m benchmarks NAME --help: its options)\n")
        print("\n".join(f"  {name:<{width}}  {line}" for name, line in names.items()))
        return 0
    name = sys.argv[1]
    if name not in names:
        print(f"error: no benchmark '{name}' (python -m benchmarks lists them)", file=sys.stderr)
        return 2
    sys.argv = [f"python -m benchmarks {name}", *sys.argv[2:]]
    result = importlib.import_module(f"benchmarks.{name}").main()
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
