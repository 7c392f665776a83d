"""Benchmark: opening the graph store in several processes at once, as web workers and CLIs on one
machine do. A synthetic seed graph (`--edges` edges, a fifth as many entities, passage links) in a temp
folder; then one process opens it alone (the first open, which may build what later opens reuse), then
`--processes` processes open it side by side. Each process opens the store, runs 1-hop reads of 50
entities `--queries` times, and reports its open seconds, read p50, resident memory (VmRSS) and its
proportional share (Pss: pages shared between processes counted once in the sum). Prints a table and
writes JSON.

    python -m benchmarks store_sharing --edges 1000000 5000000 --out bench_results/store_sharing.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.neighbourhood_latency import synthetic_graph, synthetic_links
from enrich_rag.storage.partitions import write_partition


def _memory_mb() -> dict[str, int]:
    status = {k: v for k, _, v in (line.partition(":") for line in Path("/proc/self/status").read_text().splitlines())}
    rollup = {k: v for k, _, v in (line.partition(":") for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:])}
    return {
        "rss_mb": int(status["VmRSS"].split()[0]) // 1024,
        "peak_rss_mb": int(status["VmHWM"].split()[0]) // 1024,
        "pss_mb": int(rollup["Pss"].split()[0]) // 1024,
    }


def _open_and_read(root: str, queries: int, start_at: float) -> None:
    """One process: wait for the common start, open, read, report one JSON line."""
    from enrich_rag.storage.graph_store import GraphStore

    time.sleep(max(0.0, start_at - time.time()))
    t0 = time.perf_counter()
    store = GraphStore(Path(root))
    opened = time.perf_counter() - t0
    ids = [n["id"] for n in store._query("SELECT src AS id FROM edges WHERE hash(id) % 997 = 0 LIMIT 2000")]
    rng = np.random.default_rng(0)
    times = []
    for _ in range(queries):
        batch = list(rng.choice(ids, 50, replace=False))
        t0 = time.perf_counter()
        store.neighbors(batch)
        times.append((time.perf_counter() - t0) * 1000)
    print(json.dumps({"open_s": round(opened, 2), "read_p50_ms": round(statistics.median(times), 1)} | _memory_mb()), flush=True)


def _processes(root: Path, n: int, queries: int) -> list[dict]:
    start_at = time.time() + 2.0
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "benchmarks.store_sharing", "--worker", str(root), str(queries), str(start_at)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    out = []
    for proc in procs:
        stdout, _ = proc.communicate()
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _open_and_read(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--out", default="bench_results/store_sharing.json")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    results = []
    for edges in args.edges:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "graph"
            nodes, edge_rows = synthetic_graph(edges // 5, edges, seed=0)
            links = synthetic_links(nodes["id"].to_numpy(zero_copy_only=False), edges // 10, 2, seed=2)
            write_partition(root, "seed", nodes, edge_rows, links)
            alone = _processes(root, 1, args.queries)[0]
            side_by_side = _processes(root, args.processes, args.queries)
            results.append(
                {
                    "edges": edges,
                    "links": links.num_rows,
                    "first_process": alone,
                    "processes": side_by_side,
                    "sum_rss_mb": sum(p["rss_mb"] for p in side_by_side),
                    "sum_pss_mb": sum(p["pss_mb"] for p in side_by_side),
                    "max_open_s": max(p["open_s"] for p in side_by_side),
                }
            )
            Console(stderr=True).print(results[-1])
    table = Table(title=f"graph store opened by 1, then {args.processes} processes at once (commit {commit})")
    for column in ("edges", "first open s", "first RSS MB", f"{args.processes}x open s (max)", "read p50 ms", "RSS MB each", "sum Pss MB"):
        table.add_column(column)
    for r in results:
        table.add_row(
            f"{r['edges']:,}",
            str(r["first_process"]["open_s"]),
            str(r["first_process"]["rss_mb"]),
            str(r["max_open_s"]),
            str(statistics.median(p["read_p50_ms"] for p in r["processes"])),
            ", ".join(str(p["rss_mb"]) for p in r["processes"]),
            str(r["sum_pss_mb"]),
        )
    Console().print(table)
    Path(args.out).write_text(json.dumps({"commit": commit, "processes": args.processes, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
