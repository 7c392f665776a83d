"""Shared entry for the thin `scripts/` stage wrappers: load config, time, report, fail in one line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from rich.console import Console

from enrich_rag.config import Config, load_config
from enrich_rag.errors import EnrichRagError
from enrich_rag.stages.build_keys import STAGE_NAMES, write_stamp

console = Console(stderr=True, soft_wrap=True)  # one error, one line, however narrow the terminal


def stage_args(name: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=f"EnrichRAG stage: {name}")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--config", default=None, help="optional configs/<name>.yaml overlay")
    return parser.parse_args()


def run_stage(name: str, fn: Callable[[Config], dict]) -> None:
    args = stage_args(name)
    start = time.perf_counter()
    try:
        config = load_config(args.params, args.config)
        stats = fn(config)
    except EnrichRagError as exc:
        console.print(f"[red]error[/red] {name}: {exc}")
        sys.exit(1)
    stage = next((key for key, stage_name in STAGE_NAMES.items() if stage_name == name), None)
    if stage is not None:  # the key `run_evaluation.py` checks before it trusts this build
        write_stamp(config, stage)
    detail = ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in stats.items())
    console.print(f"[green]{name}[/green] wrote {detail} in {time.perf_counter() - start:.1f}s")
