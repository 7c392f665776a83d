"""Readers never see half a partition while a writer commits one (threads and processes)."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pyarrow as pa

from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.partitions import write_partition
from enrich_rag.storage.schema import EDGES, NODES
from tests.conftest import make_agent

BIG = 60_000


def _tables(prefix: str, n_edges: int) -> tuple[pa.Table, pa.Table]:
    nodes = pa.Table.from_pylist(
        [{"id": f"{prefix}n{i}", "name": f"{prefix} {i}", "type": "X", "description": "", "aliases": []} for i in range(100)], schema=NODES
    )
    edges = pa.table(
        {
            "id": [f"{prefix}e{i}" for i in range(n_edges)],
            "src": [f"{prefix}n{i % 100}" for i in range(n_edges)],
            "dst": [f"{prefix}n{(i + 1) % 100}" for i in range(n_edges)],
            "src_name": ["a"] * n_edges,
            "dst_name": ["b"] * n_edges,
            "relation": ["r"] * n_edges,
            "evidence": ["some evidence sentence " * 4] * n_edges,
            "chunk_id": ["c"] * n_edges,
            "doc_id": ["d"] * n_edges,
            "confidence": pa.array([0.5] * n_edges, pa.float32()),
            "extractor": ["t"] * n_edges,
        },
        schema=EDGES,
    )
    return nodes, edges


def _observe(root: str, rounds: int) -> list[tuple]:
    seen = []
    with GraphStore(root) as store:
        for _ in range(rounds):
            counts = store.counts()
            seen.append(tuple((p["partition"], p["nodes"], p["edges"]) for p in counts["partitions"]))
    return seen


def _assert_whole(observations, writes: int) -> None:
    for snapshot in observations:
        for partition, nodes, edges in snapshot:
            if partition != "seed":
                assert (nodes, edges) == (100, BIG), f"partial partition seen: {partition} {nodes} {edges}"
    assert len({len(s) for s in observations}) >= 1
    assert max(len(s) for s in observations) <= writes + 1


def _write_many(root: Path, count: int) -> None:
    for i in range(count):
        write_partition(root, f"enrich-{i:03d}", *_tables(f"p{i}", BIG))


def test_threads_read_whole_partitions_while_one_writer_commits(tmp_path):
    root = tmp_path / "graph"
    write_partition(root, "seed", *_tables("s", 10))
    results: list = []
    readers = [threading.Thread(target=lambda: results.extend(_observe(str(root), 30))) for _ in range(3)]
    for t in readers:
        t.start()
    _write_many(root, 4)
    for t in readers:
        t.join()
    _assert_whole(results, 4)
    assert _observe(str(root), 1)[0][-1] == ("enrich-003", 100, BIG)


def test_processes_read_whole_partitions_while_one_writer_commits(tmp_path):
    root = tmp_path / "graph"
    write_partition(root, "seed", *_tables("s", 10))
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        pending = [pool.apply_async(_observe, (str(root), 25)) for _ in range(2)]
        _write_many(root, 4)
        observations = [snap for p in pending for snap in p.get(timeout=300)]
    _assert_whole(observations, 4)


def test_concurrent_questions_in_threads_match_sequential_answers(gap_config, embedded_llm, spacy_extractor):
    from concurrent.futures import ThreadPoolExecutor

    from enrich_rag.resources import Resources

    agent = make_agent(Resources(gap_config, llm=embedded_llm, extractor=spacy_extractor))
    questions = ["Who directed Inception?", "Who stars in Inception?", "What did DiCaprio win in 2016?"]
    sequential = [agent.answer(q, enrich="never").answer for q in questions]
    with ThreadPoolExecutor(3) as pool:
        concurrent = list(pool.map(lambda q: agent.answer(q, enrich="never").answer, questions))
    assert concurrent == sequential
