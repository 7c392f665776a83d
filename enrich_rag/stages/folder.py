"""Your own documents in one step: a folder of .txt, .md, .jsonl and .pdf becomes a workspace of its own.

The workspace (default `workspaces/<folder name>`) holds a config overlay for that corpus
(`config.yaml`: the folder as `corpus.source`, every path under the workspace), its build and its own
DVC repository for enrichments, so a second folder never overwrites the first. `enrich-rag query
--config <workspace>/config.yaml` (and `EnrichRAG.open`) then use it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from enrich_rag.config import load_config, paths_under
from enrich_rag.errors import InputDataError
from enrich_rag.stages.pipeline import ensure_built
from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.dvc_tracking import DvcRepo

WORKSPACES = Path("workspaces")
OVERLAY = "config.yaml"


def default_workspace(folder: Path | str) -> Path:
    return WORKSPACES / Path(folder).resolve().name


def folder_overlay(folder: Path, workspace: Path) -> dict[str, Any]:
    return {"corpus": {"source": str(folder), "format": "folder"}, "paths": paths_under(workspace / "data", dvc_root=workspace)}


def build_folder(folder: Path | str, workspace: Path | str | None = None, params: Path | str = "params.yaml", force: bool = False) -> Path:
    """Write the workspace's overlay, build what is missing or stale, and return the overlay's path."""
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise InputDataError(f"{folder}: not a folder (give a folder of .txt, .md, .jsonl or .pdf files)")
    workspace = Path(workspace or default_workspace(folder)).resolve()
    overlay = workspace / OVERLAY
    with atomic_file(overlay) as tmp:
        tmp.write_text(
            f"# {folder} as a corpus of its own (`enrich-rag build`); edit freely\n"
            + yaml.safe_dump(folder_overlay(folder, workspace), sort_keys=False),
            encoding="utf-8",
        )
    config = load_config(params, overlay)
    dvc = DvcRepo(workspace)
    if not dvc.exists():
        dvc.init()  # enrichments are recorded in the workspace's own repository
    ensure_built(config, folder.name, force=force)
    return overlay
