"""Benchmark: the bundled build, stage by stage, as `dvc repro` runs it (same stage functions), in a
temp folder so the project's build is not touched. Wall seconds, what each stage wrote, and the
process's peak RSS after each stage. Run it on a quiet machine: the stages use every core.

    python scripts/bench_build_stages.py --out bench_results/build_stages.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.config import PathsConfig, load_config, paths_under
from enrich_rag.stages.build_keys import STAGE_NAMES
from enrich_rag.stages.pipeline import build_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--out", default="bench_results/build_stages.json")
    args = parser.parse_args()
    config = load_config(args.params)
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
    total = round(sum(r["seconds"] for r in rows), 1)
    table = Table(title=f"bundled build, stage by stage ({platform.processor() or platform.machine()}, quiet)")
    for column in ("stage", "seconds", "peak RSS MB (process so far)"):
        table.add_column(column)
    for r in rows:
        table.add_row(r["stage"], str(r["seconds"]), str(r["peak_rss_mb"]))
    table.add_row("total", str(total), "")
    Console().print(table)
    corpus = os.path.relpath(config.corpus.source)  # the project's bundled data, not this machine's path
    Path(args.out).write_text(json.dumps({"corpus": corpus, "stages": rows, "total_seconds": total}, indent=2) + "\n")


if __name__ == "__main__":
    main()
