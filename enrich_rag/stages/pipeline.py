"""The offline build in this process, stage by stage, each only when its output is missing or was
built from other settings (the keys of `build_keys.py`, which `dvc repro` writes too). What an
evaluation and `enrich-rag build DIR` run; a project with dvc.yaml may use `dvc repro` instead."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from enrich_rag.config import Config
from enrich_rag.stages.build_keys import STAGE_NAMES, staleness, write_stamp
from enrich_rag.stages.corpus import prepare_corpus
from enrich_rag.stages.indexes import build_corpus_index, build_graph_index
from enrich_rag.stages.seed_graph import build_seed_graph
from enrich_rag.storage.partitions import committed_partitions

console = Console(stderr=True)
Step = tuple[str, Callable[[], Any], Callable[[], Any]]  # stage key, whether its output exists, how to build it


def build_steps(config: Config, prepare: Step | None = None) -> list[Step]:
    """In build order; `prepare` comes first when the corpus itself is made (an evaluation's)."""
    paths = config.paths
    return [
        *([prepare] if prepare else []),
        ("chunks", lambda: Path(paths.chunks).is_file(), lambda: prepare_corpus(config)),
        ("corpus_index", lambda: Path(paths.corpus_index).is_dir(), lambda: build_corpus_index(config)),
        ("seed_graph", lambda: "seed" in committed_partitions(Path(paths.graph)), lambda: build_seed_graph(config)),
        ("graph_index", lambda: Path(paths.graph_index).is_dir(), lambda: build_graph_index(config)),
    ]


def ensure_built(config: Config, label: str, prepare: Step | None = None, force: bool = False) -> list[str]:
    """Run every stage that is missing or stale (all with `force`), in order, so a later stage sees the
    rebuilt one; a build made with the settings now is used as it is. Returns the stages it ran."""
    ran = []
    for stage, exists, run in build_steps(config, prepare):
        why = "forced" if force else "missing" if not exists() else staleness(config, stage)
        if why is None:
            continue
        console.print(f"[cyan]building[/cyan] {STAGE_NAMES[stage]} for {label}: {why}")
        console.print(f"  {run()}")
        write_stamp(config, stage)
        ran.append(stage)
    return ran
