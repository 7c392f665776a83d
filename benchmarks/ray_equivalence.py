"""The Ray build against the local build on a real corpus: the seed graph's node, edge and link rows
must be set-equal. Both write into a temp folder; the project's build is not touched.

    python -m benchmarks ray_equivalence --workers 2    # -> table + bench_results/ray_equivalence.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table

from enrich_rag.config import BuildConfig, load_config
from enrich_rag.stages.seed_graph import build_seed_graph
from enrich_rag.storage.partitions import partition_dir
from enrich_rag.storage.schema import SEED_PARTITION


def rows(graph: Path, table: str) -> set[tuple]:
    data = pq.read_table(partition_dir(graph, table, SEED_PARTITION) / "part-0.parquet").to_pylist()
    return {tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(r.items())) for r in data}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="bench_results/ray_equivalence.json")
    args = parser.parse_args()
    base = load_config(args.params)
    result = {"chunks": str(base.paths.chunks), "workers": args.workers, "engines": {}, "tables": {}}
    with tempfile.TemporaryDirectory() as tmp:
        graphs = {}
        for engine in ("local", "ray"):
            graph = Path(tmp) / engine
            config = dataclasses.replace(
                base,
                build=BuildConfig(engine=engine),
                ray=dataclasses.replace(base.ray, workers=args.workers),
                paths=dataclasses.replace(base.paths, graph=str(graph)),
            )
            start = time.perf_counter()
            counts = build_seed_graph(config)
            result["engines"][engine] = counts | {"seconds": round(time.perf_counter() - start, 1)}
            graphs[engine] = graph
        for table in ("nodes", "edges", "links"):
            local, ray = rows(graphs["local"], table), rows(graphs["ray"], table)
            result["tables"][table] = {
                "local": len(local),
                "ray": len(ray),
                "equal": local == ray,
                "only_local": len(local - ray),
                "only_ray": len(ray - local),
            }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    view = Table(title=f"seed graph, local vs Ray ({args.workers} workers)")
    for column in ("table", "local rows", "Ray rows", "set-equal", "only local", "only Ray"):
        view.add_column(column)
    for table, r in result["tables"].items():
        view.add_row(table, str(r["local"]), str(r["ray"]), str(r["equal"]), str(r["only_local"]), str(r["only_ray"]))
    Console().print(view)
    Console().print({e: r["seconds"] for e, r in result["engines"].items()}, f"-> {args.out}")


if __name__ == "__main__":
    main()
