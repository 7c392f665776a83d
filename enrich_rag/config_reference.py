"""The configuration reference (docs/configuration.md), generated from the config dataclasses: every
key with its type, default, allowed values or bounds, and the comment written beside it in config.py,
so the reference cannot drift from what `load_config` accepts."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import tokenize
from typing import Any

from enrich_rag import config as config_module
from enrich_rag.config import Config


def field_comments(source: str) -> dict[tuple[str, str], str]:
    """(class, field) -> the comment on the field's line, after the comment lines right above it."""
    comments: dict[int, str] = {}
    only_comment: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
            if not token.line[: token.start[1]].strip():
                only_comment.add(token.start[0])
    out = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                above: list[str] = []
                line = item.lineno - 1
                while line in only_comment:
                    above.insert(0, comments[line])
                    line -= 1
                trailing = [comments[item.lineno]] if item.lineno in comments and item.lineno not in only_comment else []
                out[(node.name, item.target.id)] = " ".join(above + trailing)
    return out


def _allowed(f: dataclasses.Field) -> str:
    meta = f.metadata
    if "choices" in meta:
        return " | ".join(f"`{c}`" for c in meta["choices"]) + (f", or {meta['open_ended']}" if meta.get("open_ended") else "")
    bounds = [f"{'>=' if k == 'ge' else '<=' if k == 'le' else '>'} {meta[k]:,}" for k in ("gt", "ge", "le") if k in meta]
    return ", ".join(bounds)


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else ""


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render() -> str:
    comments = field_comments(inspect.getsource(config_module))
    lines = [
        "# Configuration reference",
        "",
        "Generated from `enrich_rag/config.py` by `python scripts/config_reference.py` (CI fails when it differs).",
        "Every key lives in `params.yaml` under its section; a `configs/*.yaml` overlay or a workspace's `config.yaml`",
        "sets any subset. Unknown keys, wrong types, values out of bounds and unknown choices stop loading with one",
        "line naming the key.",
        "",
    ]
    sections: list[tuple[str, Any]] = [(f.name, f.default_factory) for f in dataclasses.fields(Config)]
    while sections:
        name, cls = sections.pop(0)
        lines += [f"## `{name}`", ""]
        doc = inspect.getdoc(cls)
        if doc and not doc.startswith(f"{cls.__name__}("):
            lines += [doc.splitlines()[0], ""]
        lines += ["| key | type | default | allowed | what |", "|---|---|---|---|---|"]
        for f in dataclasses.fields(cls):
            kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
            factory: Any = f.default_factory
            if factory is not dataclasses.MISSING and dataclasses.is_dataclass(factory):
                sections.insert(0, (f"{name}.{f.name}", factory))
                lines.append(f"| `{f.name}` | section | | | see `{name}.{f.name}` below |")
                continue
            lines.append(
                f"| `{f.name}` | {_cell(kind)} | `{_cell(_default(f))}` | {_cell(_allowed(f))} | "
                f"{_cell(comments.get((cls.__name__, f.name), ''))} |"
            )
        lines.append("")
    return "\n".join(lines)
