"""Your own documents in one step: a folder of .txt, .md, .rst, .html, .docx, .pdf and .jsonl becomes a workspace of its own.

The workspace (default `workspaces/<folder name>`, or `workspaces/<folder name>-<path hash>` when
another folder of that name has it) holds a config overlay for that corpus (`config.yaml`: the folder as
`corpus.source`, every path under the workspace), its build and its own DVC repository for
enrichments, so a second folder never overwrites the first. A rebuild sets only `corpus.source`,
`corpus.format` and `paths` in the overlay; any other setting written there is kept. `enrich-rag query
--config <workspace>/config.yaml` (and `EnrichRAG.open`) then use it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import yaml

from enrich_rag.config import load_config, paths_under
from enrich_rag.errors import InputDataError
from enrich_rag.storage.atomic import atomic_file

WORKSPACES = Path("workspaces")
OVERLAY = "config.yaml"


def default_workspace(folder: Path | str) -> Path:
    """`workspaces/<name>`, unless a folder of the same name elsewhere already built there."""
    folder = Path(folder).resolve()
    plain = WORKSPACES / folder.name
    built_from = _read_overlay(plain / OVERLAY).get("corpus", {}).get("source")
    if built_from is None or Path(built_from) == folder:
        return plain
    return WORKSPACES / f"{folder.name}-{hashlib.sha1(str(folder).encode()).hexdigest()[:8]}"


def _read_overlay(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise InputDataError(f"{path}: not a YAML mapping of settings (fix it or delete it to start again)")
    return data


def folder_overlay(folder: Path, workspace: Path) -> dict[str, Any]:
    return {"corpus": {"source": str(folder), "format": "folder"}, "paths": paths_under(workspace / "data", dvc_root=workspace)}


def build_folder(folder: Path | str, workspace: Path | str | None = None, params: Path | str = "params.yaml", force: bool = False) -> Path:
    """Write the workspace's overlay, build what is missing or stale, and return the overlay's path."""
    from enrich_rag.stages.pipeline import ensure_built  # the stages' libraries: not for a server naming workspaces
    from enrich_rag.storage.dvc_tracking import DvcRepo

    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise InputDataError(f"{folder}: not a folder (give a folder of .txt, .md, .jsonl or .pdf files)")
    workspace = Path(workspace or default_workspace(folder)).resolve()
    overlay = write_overlay(folder, workspace)
    config = load_config(params, overlay)
    dvc = DvcRepo(workspace)
    if not dvc.exists():
        dvc.init()  # enrichments are recorded in the workspace's own repository
    ensure_built(config, folder.name, force=force)
    return overlay


def write_overlay(folder: Path, workspace: Path) -> Path:
    """The workspace's overlay: the build's own keys set, whatever else the user wrote kept."""
    overlay = workspace / OVERLAY
    kept = {k: v for k, v in _read_overlay(overlay).items() if k != "paths"}
    owned = folder_overlay(folder, workspace)
    settings = kept | {"corpus": dict(kept.get("corpus") or {}) | owned["corpus"], "paths": owned["paths"]}
    with atomic_file(overlay) as tmp:
        tmp.write_text(
            f"# {folder} as a corpus of its own (`enrich-rag build`). Each build sets corpus.source, corpus.format\n"
            "# and paths; any other setting you add here is kept (comments are not).\n" + yaml.safe_dump(settings, sort_keys=False),
            encoding="utf-8",
        )
    return overlay


WORKSPACE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")


def served_workspaces(specs: list[str]) -> dict[str, Path]:
    """`NAME=PATH` (or `PATH`, named by its folder): PATH a built workspace (its folder, or its
    config.yaml); the overlay of each, by name, in the order given."""
    overlays: dict[str, Path] = {}
    for spec in specs:
        name, _, where = spec.rpartition("=")
        path = Path(where)
        overlay = path / OVERLAY if path.is_dir() else path
        name = name or (path.name if path.is_dir() else path.parent.name)
        if not WORKSPACE_NAME.fullmatch(name):
            raise InputDataError(f"workspace name '{name[:60]}': use letters, digits, '_', '-', '.' (at most 40), as NAME=PATH")
        if name in overlays:
            raise InputDataError(f"workspace '{name}' is given twice")
        if not overlay.is_file():
            raise InputDataError(f"{where}: not a built workspace (no {OVERLAY}; `enrich-rag build FOLDER` makes one)")
        overlays[name] = overlay
    return overlays
