"""A private copy of a built graph for runs that write to it (EnrichGraph), with its own DVC repo.

The dataset's build stays as DVC produced it, so every method reads the same seed and reruns are
reproducible; the copy grows over a run and survives an interruption for the resume.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from enrich_rag.config import Config
from enrich_rag.storage.atomic import atomic_directory
from enrich_rag.storage.dvc_tracking import DvcRepo


def writable_copy(config: Config, root: Path) -> Config:
    """Copy graph + graph index under `root` once (an existing copy is reused as it is)."""
    root = Path(root)
    if not (root / "graph_index").is_dir():
        with atomic_directory(root) as tmp:
            shutil.copytree(config.paths.graph, tmp / "graph", ignore=shutil.ignore_patterns(".*"))
            shutil.copytree(config.paths.graph_index, tmp / "graph_index")
            DvcRepo(tmp).init()
    paths = dataclasses.replace(config.paths, graph=str(root / "graph"), graph_index=str(root / "graph_index"), dvc_root=str(root))
    return dataclasses.replace(config, paths=paths)
