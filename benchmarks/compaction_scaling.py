"""Benchmark: a graph grown by 1,000 enrichment-sized partitions, before and after `graph compact`.

A synthetic seed (power-law entity graph with passage links), then `--partitions` small partitions
(`--nodes` new entities and `--edges` named facts each, linked to seed entities and passages). They
are written with the commit protocol's partition step and indexed and recorded with DVC by its own
recovery path (`GraphWriter.reconcile`: one `dvc add` for all, where a commit each would spend about
a second in DVC alone); compaction then runs the real protocol. Timed on each graph: opening the store,
and the per-question store reads (1-hop neighbours of 5 entities, their passage links) as p50 over
`--queries` draws; also the per-query check as it was before the version stamp (three stat calls per
partition). The baseline is a one-partition-per-kind graph of the same rows (seed + one partition).

    python -m benchmarks compaction_scaling --out bench_results/compaction.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from rich.console import Console
from rich.table import Table

from benchmarks.neighbourhood_latency import synthetic_graph, synthetic_links
from enrich_rag.config import EmbeddingsConfig
from enrich_rag.index.embeddings import build_index, open_index
from enrich_rag.storage.compaction import merged_tables
from enrich_rag.storage.dvc_tracking import DvcRepo
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.graph_writer import GraphWriter
from enrich_rag.storage.partitions import committed_partitions, write_partition
from enrich_rag.storage.schema import EDGES, LINKS, NODES

SEED_CHUNKS = 20_000


def enrichment(i: int, seed_ids: np.ndarray, nodes: int, edges: int, rng: np.random.Generator) -> tuple[pa.Table, pa.Table, pa.Table]:
    """What one deep read adds: new entities, facts from them to seed entities, links to seed passages."""
    new = [f"p{i:05d}-{j}" for j in range(nodes)]
    src = [new[j % nodes] for j in range(edges)]
    dst = list(seed_ids[rng.integers(0, len(seed_ids), edges)])
    chunks = [f"c{c}" for c in rng.integers(0, SEED_CHUNKS, edges)]
    node_rows = pa.Table.from_pylist(
        [{"id": n, "name": f"Entity {n}", "type": "PERSON", "description": "", "aliases": []} for n in new], schema=NODES
    )
    edge_rows = pa.Table.from_pylist(
        [
            {
                "id": f"e-{i:05d}-{j}",
                "src": s,
                "dst": d,
                "src_name": f"Entity {s}",
                "dst_name": d,
                "relation": "worked with",
                "evidence": f"Entity {s} worked with {d}.",
                "chunk_id": c,
                "doc_id": c.replace("c", "d"),
                "confidence": 0.9,
                "extractor": "llm",
            }
            for j, (s, d, c) in enumerate(zip(src, dst, chunks))
        ],
        schema=EDGES,
    )
    links = pa.Table.from_pylist(
        [{"node": s, "chunk_id": c, "doc_id": c.replace("c", "d"), "count": 1, "is_title": False} for s, c in zip(src, chunks)],
        schema=LINKS,
    )
    return node_rows, edge_rows, links


def time_queries(store: GraphStore, entity_draws: list[list[str]], full_check: bool = False) -> dict:
    """p50 of one question's store reads; `full_check`: as before the version stamp (listing and
    three stat calls per partition before every query)."""
    times = []
    for ids in entity_draws:
        t0 = time.perf_counter()
        if full_check:
            with store._lock:
                store._refresh(full=True)
        store.neighbors(ids, limit=200)
        store.links(node_ids=ids)
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(float(np.percentile(times, 95)), 2)}


def open_store(root: Path) -> tuple[GraphStore, float]:
    t0 = time.perf_counter()
    store = GraphStore(root)
    return store, round(time.perf_counter() - t0, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--seed-nodes", type=int, default=100_000)
    parser.add_argument("--seed-edges", type=int, default=500_000)
    parser.add_argument("--nodes", type=int, default=8, help="new entities per partition")
    parser.add_argument("--edges", type=int, default=12, help="facts per partition")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", default="bench_results/compaction.json")
    args = parser.parse_args()
    console = Console(stderr=True)
    rng = np.random.default_rng(0)
    embeddings = EmbeddingsConfig()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    result: dict = {"commit": commit, "config": vars(args)}
    with tempfile.TemporaryDirectory() as tmp:
        root, index_path, base_root = Path(tmp, "graph"), Path(tmp, "index"), Path(tmp, "one-partition")
        seed_nodes, seed_edges = synthetic_graph(args.seed_nodes, args.seed_edges, seed=0)
        seed_links = synthetic_links(seed_nodes.column("id").to_numpy(zero_copy_only=False), SEED_CHUNKS, 2, seed=1)
        write_partition(root, "seed", seed_nodes, seed_edges, seed_links)
        seed_ids = seed_nodes.column("id").to_numpy(zero_copy_only=False)
        t0 = time.perf_counter()
        for i in range(args.partitions):
            write_partition(root, f"enrich-{i:06d}", *enrichment(i, seed_ids, args.nodes, args.edges, rng))
        result["write_partitions_s"] = round(time.perf_counter() - t0, 1)
        placeholder = {"id": "placeholder", "text": "placeholder", "kind": "node", "partition": "seed"}  # the seed's rows stay out
        build_index([placeholder], embeddings, index_path, "graph index")
        dvc = DvcRepo(tmp)
        dvc.init()
        store, _ = open_store(root)
        writer = GraphWriter(root, index_path, store, dvc, lambda: open_index(index_path, embeddings))
        t0 = time.perf_counter()
        repair = writer.reconcile()
        result["index_and_record_s"] = round(time.perf_counter() - t0, 1)
        result["indexed_rows"] = sum(repair.reindexed.values())
        assert writer.verify() == [], writer.verify()

        draws = [list(rng.choice(seed_ids, 5)) for _ in range(args.queries)]
        many = committed_partitions(root)
        store.close()
        store, opened = open_store(root)
        result["before"] = {"partitions": len(many), "open_s": opened} | time_queries(store, draws)
        result["before_full_check"] = time_queries(store, draws[: max(20, args.queries // 10)], full_check=True)
        counts = store.counts()
        result["rows"] = {"nodes": counts["nodes"], "edges": counts["edges"]}

        merged = merged_tables(root, many[1:])  # the baseline: the same rows written as one partition
        write_partition(base_root, "seed", seed_nodes, seed_edges, seed_links)
        write_partition(base_root, "enrich-all", merged.nodes, merged.edges, merged.links)
        base, opened = open_store(base_root)
        result["one_partition"] = {"partitions": 2, "open_s": opened} | time_queries(base, draws)

        writer.store = store
        t0 = time.perf_counter()
        compaction = writer.compact()
        result["compact_s"] = round(time.perf_counter() - t0, 1)
        result["compaction"] = {k: v for k, v in (compaction or {}).items() if k != "dvc"}
        assert writer.verify() == [], writer.verify()
        store.close()
        store, opened = open_store(root)
        result["after"] = {"partitions": len(committed_partitions(root)), "open_s": opened} | time_queries(store, draws)
        same = store.counts()
        result["same_rows"] = (same["nodes"], same["edges"]) == (counts["nodes"], counts["edges"])
        store.close()
        base.close()
    for key in ("before", "after"):
        result[key]["vs_one_partition"] = round(result[key]["p50_ms"] / result["one_partition"]["p50_ms"], 2)
    table = Table(title=f"{args.partitions} enrichment partitions over a {args.seed_edges:,}-edge seed")
    for column in ("graph", "partitions", "open s", "query p50 ms", "p95 ms", "x one partition"):
        table.add_column(column)
    for key, label in (("one_partition", "one partition, same rows"), ("before", "before compaction"), ("after", "after compaction")):
        r = result[key]
        cells = (r["partitions"], r["open_s"], r["p50_ms"], r["p95_ms"], r.get("vs_one_partition", 1.0))
        table.add_row(label, *map(str, cells))
    full = result["before_full_check"]
    table.add_row("before, check as it was", str(result["before"]["partitions"]), "", str(full["p50_ms"]), str(full["p95_ms"]), "")
    Console().print(table)
    console.print(f"compaction {result['compact_s']} s; same rows: {result['same_rows']}")
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
