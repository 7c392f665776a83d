"""Benchmark: the bundled build, stage by stage, in a temp folder so the project's build is not touched.
Run it on a quiet machine: the stages use every core.

By default the stage functions run in one process (what `enrich-rag build` and an evaluation's build
do): wall seconds, what each stage wrote, the process's peak RSS after each stage. With `--dvc`, a copy
of the project's pipeline (dvc.yaml, params.yaml, scripts/, the package, the bundled corpus) in a fresh
DVC repository runs `dvc repro -s <stage>` for each stage in turn, as a user's `dvc repro` does: a
process and a model load per stage, and DVC's hashing and caching of each output.

    python -m benchmarks build_stages --out bench_results/build_stages.json
    python -m benchmarks build_stages --dvc --out bench_results/build_stages_dvc.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.config import PathsConfig, load_config, paths_under
from enrich_rag.stages.build_keys import STAGE_NAMES
from enrich_rag.stages.pipeline import build_steps

DVC_STAGES = ("prepare_corpus", "build_corpus_index", "build_seed_graph", "build_graph_index", "summary")


def dvc_rows(config_source: str) -> list[dict[str, Any]]:
    """`dvc repro -s` of each stage in a copy of the project's pipeline; wall seconds each, children's peak RSS."""
    project = Path(__file__).resolve().parents[1]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        for name in ("dvc.yaml", "params.yaml", "scripts", "enrich_rag"):
            source = project / name
            if source.is_dir():
                shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(source, repo / name)
        corpus = repo / config_source
        corpus.parent.mkdir(parents=True)
        shutil.copy(project / config_source, corpus)
        dvc = str(Path(sys.executable).with_name("dvc"))
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}
        subprocess.run([dvc, "init", "--no-scm", "-q"], cwd=repo, check=True)
        for stage in DVC_STAGES:
            t0 = time.perf_counter()
            subprocess.run([dvc, "repro", "-s", stage], cwd=repo, env=env, check=True, capture_output=True)
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            rows.append({"stage": stage, "seconds": round(time.perf_counter() - t0, 1), "peak_rss_mb": round(peak)})
            Console(stderr=True).print(rows[-1])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--dvc", action="store_true", help="run each stage through `dvc repro -s` in a copy of the pipeline")
    parser.add_argument("--out", default="bench_results/build_stages.json")
    args = parser.parse_args()
    config = load_config(args.params)
    rows = dvc_rows(os.path.relpath(config.corpus.source)) if args.dvc else in_process_rows(config)
    total = round(sum(r["seconds"] for r in rows), 1)
    how = "dvc repro -s per stage" if args.dvc else "one process"
    table = Table(title=f"bundled build, stage by stage ({how}; {platform.processor() or platform.machine()}, quiet)")
    for column in ("stage", "seconds", "peak RSS MB (the largest process so far)"):
        table.add_column(column)
    for r in rows:
        table.add_row(r["stage"], str(r["seconds"]), str(r["peak_rss_mb"]))
    table.add_row("total", str(total), "")
    Console().print(table)
    corpus = os.path.relpath(config.corpus.source)  # the project's bundled data, not this machine's path
    result = {"corpus": corpus, "how": how, "stages": rows, "total_seconds": total}
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


def in_process_rows(config: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = dataclasses.replace(config, paths=PathsConfig(**paths_under(Path(tmp) / "data", tmp)))
        for stage, _, run in build_steps(config):
            t0 = time.perf_counter()
            output = run()
            rows.append(
                {
                    "stage": STAGE_NAMES[stage],
                    "seconds": round(time.perf_counter() - t0, 1),
                    "output": output if isinstance(output, dict) else str(output),
                    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                }
            )
            Console(stderr=True).print(rows[-1])
    return rows


if __name__ == "__main__":
    main()
