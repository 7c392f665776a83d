"""Benchmark: 1-hop neighbours of 50 seed ids, and one question's PageRank walk, over a synthetic
5M-edge Parquet graph (1M entities, 2M entity-passage links over 500k passages).

DuckDB reads the Parquet directly (warm = after one untimed run); networkx is the "load it all into
memory" alternative, timed as load + the same query. The walk (`evidence/graph_rank.walk`) reads its
bounded neighbourhood from DuckDB and runs PageRank on it, as graph retrieval does per question;
it starts from 3 entities and 20 passages. With the default build present it also times the whole
GraphRank step (both index searches, the walk, passage lookup) on 50 bundled questions. Prints a
table, writes JSON.

    python -m benchmarks neighbourhood_latency --edges 5000000 --out bench_results/graph_store.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from rich.console import Console
from rich.table import Table

from enrich_rag.config import RetrievalConfig
from enrich_rag.evidence.graph_rank import walk
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.partitions import write_partition

WALK_ENTITIES, WALK_PASSAGES = 3, 20


def synthetic_links(ids: np.ndarray, n_chunks: int, per_node: int, seed: int) -> pa.Table:
    """Every passage is about one entity (its title link); mentions follow the same power law as edges."""
    rng = np.random.default_rng(seed)
    n = len(ids)
    weights = 1.0 / np.arange(1, n + 1) ** 0.8
    weights /= weights.sum()
    mentions = ids[rng.choice(n, n * per_node, p=weights)]
    nodes = np.concatenate([ids[rng.integers(0, n, n_chunks)], mentions])
    chunks = np.concatenate([np.arange(n_chunks), rng.integers(0, n_chunks, len(mentions))])
    return pa.table(
        {
            "node": nodes,
            "chunk_id": [f"c{c}" for c in chunks],
            "doc_id": [f"d{c}" for c in chunks],
            "count": pa.array(np.ones(len(nodes), dtype=np.int32)),
            "is_title": np.arange(len(nodes)) < n_chunks,
        }
    )


def synthetic_graph(n_nodes: int, n_edges: int, seed: int) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(seed)
    ids = np.array([f"n{i:016x}" for i in rng.permutation(n_nodes * 16)[:n_nodes]])
    # Power-law-ish degrees, as real entity graphs have hubs.
    weights = 1.0 / np.arange(1, n_nodes + 1) ** 0.8
    weights /= weights.sum()
    src = ids[rng.choice(n_nodes, n_edges, p=weights)]
    dst = ids[rng.integers(0, n_nodes, n_edges)]
    nodes = pa.table(
        {
            "id": ids,
            "name": ids,
            "type": ["ENTITY"] * n_nodes,
            "description": [""] * n_nodes,
            "aliases": pa.array([[]] * n_nodes, pa.list_(pa.string())),
        }
    )
    edges = pa.table(
        {
            "id": [f"e{i:016x}" for i in range(n_edges)],
            "src": src,
            "dst": dst,
            "src_name": src,
            "dst_name": dst,
            "relation": rng.choice(["directed", "born in", "co-occurs with", "member of"], n_edges),
            "evidence": [""] * n_edges,
            "chunk_id": [f"c{i % 10000}" for i in range(n_edges)],
            "doc_id": [f"d{i % 5000}" for i in range(n_edges)],
            "confidence": rng.random(n_edges, dtype=np.float32),
            "extractor": ["synthetic"] * n_edges,
        }
    )
    return nodes, edges


def bundled_graph_rank(params: Path, questions: int) -> dict:
    """The GraphRank step per question on the default build, as the agent runs it (warm, after one question)."""
    from enrich_rag.api import EnrichRAG
    from enrich_rag.config import load_config
    from enrich_rag.eval.datasets import load_questions
    from enrich_rag.evidence.query_analysis import analyze_query
    from enrich_rag.storage.partitions import committed_partitions

    config = load_config(params)
    if config.corpus.format != "benchmark" or not committed_partitions(Path(config.paths.graph)):
        return {}
    session = EnrichRAG(config, reconcile=False)
    resources, agent = session.resources, session.agent()
    items = load_questions(config.corpus.source, "normalized")[: questions + 1]
    analyses = [analyze_query(i.question, resources.nlp, resources.store) for i in items]
    agent.retriever.rank(analyses[0], agent.retriever.search(items[0].question))
    times = []
    for item, analysis in zip(items[1:], analyses[1:]):
        t0 = time.perf_counter()
        agent.retriever.rank(analysis, agent.retriever.search(item.question))
        times.append((time.perf_counter() - t0) * 1000)
    counts = resources.store.counts()
    session.close()
    return {
        "bundled_nodes": counts["nodes"],
        "bundled_edges": counts["edges"],
        "bundled_graph_rank_p50_ms": round(statistics.median(times), 1),
        "bundled_graph_rank_p95_ms": round(float(np.percentile(times, 95)), 1),
        "bundled_target_ms": 150,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edges", type=int, default=5_000_000)
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--chunks", type=int, default=500_000)
    parser.add_argument("--skip-networkx", action="store_true")
    parser.add_argument("--params", default="params.yaml", help="the default build to time GraphRank on (skipped if not built)")
    parser.add_argument("--out", default="bench_results/graph_store.json")
    args = parser.parse_args()
    console = Console()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "graph"
        t0 = time.perf_counter()
        nodes, edges = synthetic_graph(args.nodes, args.edges, seed=0)
        links = synthetic_links(nodes["id"].to_numpy(zero_copy_only=False), args.chunks, 2, seed=2)
        write_partition(root, "seed", nodes, edges, links)
        build_s = time.perf_counter() - t0
        size_mb = sum(p.stat().st_size for p in root.rglob("*.parquet")) / 1e6
        rng = np.random.default_rng(1)
        queries = [list(rng.choice(nodes["id"].to_numpy(zero_copy_only=False), args.seeds, replace=False)) for _ in range(args.repeats)]

        t0 = time.perf_counter()
        store = GraphStore(root)  # loads Parquet into indexed in-memory tables
        open_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        store.neighbors(queries[0])
        cold_ms = (time.perf_counter() - t0) * 1000
        warm, found = [], []
        for q in queries:
            t0 = time.perf_counter()
            hood = store.neighbors(q)
            warm.append((time.perf_counter() - t0) * 1000)
            found.append(len(hood))
        walks, sizes, config = [], [], RetrievalConfig()
        for q in queries:
            dense = {f"c{c}": 1.0 - i / WALK_PASSAGES for i, c in enumerate(rng.integers(0, args.chunks, WALK_PASSAGES))}
            t0 = time.perf_counter()
            entities = list(q[:WALK_ENTITIES])
            read = store.neighbourhood(entities, [], list(dense), config.max_links)  # the walk's one read, timed with it
            size = walk(read, dict.fromkeys(entities, 1.0), dense, config, 10).size
            walks.append((time.perf_counter() - t0) * 1000)
            sizes.append(size)
        store.close()
        result = {
            "edges": args.edges,
            "nodes": args.nodes,
            "seeds": args.seeds,
            "parquet_mb": round(size_mb, 1),
            "write_s": round(build_s, 1),
            "store_open_s": round(open_s, 1),
            "duckdb_first_query_ms": round(cold_ms, 1),
            "duckdb_warm_p50_ms": round(statistics.median(warm), 1),
            "duckdb_warm_p95_ms": round(float(np.percentile(warm, 95)), 1),
            "mean_edges_returned": round(statistics.mean(found), 1),
            "target_warm_ms": 50,
            "links": links.num_rows,
            "pagerank_walk_p50_ms": round(statistics.median(walks), 1),
            "pagerank_walk_p95_ms": round(float(np.percentile(walks, 95)), 1),
            "pagerank_walk_mean_nodes": round(statistics.mean(s[0] for s in sizes)),
            "pagerank_walk_mean_edges": round(statistics.mean(s[1] for s in sizes)),
            "pagerank_target_ms": 1000,
        }

        if not args.skip_networkx:
            import networkx as nx

            t0 = time.perf_counter()
            graph = nx.MultiDiGraph()
            graph.add_edges_from(zip(edges["src"].to_pylist(), edges["dst"].to_pylist(), edges["id"].to_pylist()))
            load_s = time.perf_counter() - t0
            nx_ms = []
            for q, expected in zip(queries, found):
                t0 = time.perf_counter()
                got = {k for n in q if n in graph for _, _, k in graph.out_edges(n, keys=True)}
                got |= {k for n in q if n in graph for _, _, k in graph.in_edges(n, keys=True)}
                nx_ms.append((time.perf_counter() - t0) * 1000)
                assert len(got) == expected, (len(got), expected)
            result.update(
                {
                    "networkx_load_s": round(load_s, 1),
                    "networkx_query_p50_ms": round(statistics.median(nx_ms), 3),
                    "networkx_load_plus_query_over_duckdb_warm": round(
                        (load_s * 1000 + statistics.median(nx_ms)) / statistics.median(warm), 1
                    ),
                    "networkx_query_over_duckdb_warm": round(statistics.median(nx_ms) / statistics.median(warm), 4),
                }
            )

    result.update(bundled_graph_rank(Path(args.params), args.repeats))
    table = Table(title=f"1-hop neighbours of {args.seeds} ids, {args.edges:,} edges")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in result.items():
        table.add_row(key, f"{value:,}" if isinstance(value, (int, float)) else str(value))
    console.print(table)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
