"""Parallel writers: several `enrich-rag enrich` processes at once on one graph, several rounds.

A sandbox build (`sandbox.py`, quarter-size seed) in a temp dir; each round starts `--writers` CLI
processes together, each enriching a different topic the seed lacks. After each round: every exit
code, the partitions written, and `GraphWriter.verify()` (every committed partition's rows in the
index, DVC records = partitions, nothing left over).

    python -m benchmarks parallel_writers --writers 4 --rounds 5 --out bench_results/parallel_writers.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.sandbox import build_sandbox, sandbox_params
from enrich_rag.config import load_config


def _state(params: Path) -> tuple[list[str], list[str]]:
    from enrich_rag.api import EnrichRAG
    from enrich_rag.storage.partitions import committed_partitions

    config = load_config(params)
    with EnrichRAG(config, reconcile=False) as session:
        problems = session.resources.writer.verify()
    return [p for p in committed_partitions(Path(config.paths.graph)) if p != "seed"], problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--passages", type=int, default=240)
    parser.add_argument("--out", default="bench_results/parallel_writers.json")
    args = parser.parse_args()
    console = Console(stderr=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    cli = str(Path(sys.executable).with_name("enrich-rag"))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        params = sandbox_params(Path(tmp), args.passages, seed_share=0.25)
        topics = iter(build_sandbox(params))
        for round_ in range(args.rounds):
            before, _ = _state(params)
            started = time.perf_counter()
            procs = [
                subprocess.Popen(
                    [cli, "enrich", next(topics), "--params", str(params), "--json"],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for _ in range(args.writers)
            ]
            outcomes = []
            for p in procs:
                out, err = p.communicate(timeout=600)
                outcomes.append((p.returncode, out, err))
            wall = time.perf_counter() - started
            after, problems = _state(params)
            written = [json.loads(out).get("partition") for code, out, _ in outcomes if code == 0 and out.strip()]
            row = {
                "round": round_ + 1,
                "exit_codes": [code for code, _, _ in outcomes],
                "errors": [err.strip().splitlines()[-1] for code, _, err in outcomes if code != 0 and err.strip()],
                "partitions_reported": len([w for w in written if w]),
                "partitions_new": len(set(after) - set(before)),
                "wall_s": round(wall, 1),
                "verify": problems,
            }
            rows.append(row)
            console.print(
                f"round {round_ + 1}: exit codes {row['exit_codes']}, {row['partitions_new']} new partitions, "
                f"verify={problems or 'consistent'}"
            )
    table = Table(title=f"{args.writers} `enrich-rag enrich` processes at once, {args.rounds} rounds")
    for column in ("round", "exit codes", "partitions written", "wall s", "verify"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            str(r["round"]),
            " ".join(map(str, r["exit_codes"])),
            f"{r['partitions_new']} (reported {r['partitions_reported']})",
            str(r["wall_s"]),
            "; ".join(r["verify"]) or "consistent",
        )
    Console().print(table)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "writers": args.writers,
                "rounds": rows,
                "all_exit_0": all(c == 0 for r in rows for c in r["exit_codes"]),
                "all_consistent": all(not r["verify"] for r in rows),
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
