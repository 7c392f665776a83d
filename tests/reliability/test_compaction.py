"""Compaction on the real small build (Parquet, DuckDB, txtai, a real DVC repository): readers see the
same rows before and after, rolling the compaction back restores what it merged from the DVC cache, and
a compaction killed at its commit point is finished by the next start."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from enrich_rag.errors import StorageError
from enrich_rag.index.graph_index import search_graph
from enrich_rag.resources import Resources
from enrich_rag.storage.graph_writer import COMPACTED
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.partitions import GraphTables, committed_partitions, on_disk
from enrich_rag.storage.schema import EDGES, LINKS, NODES
from tests.conftest import make_agent

PEOPLE = ["Tom Hardy", "Cillian Murphy", "Emma Thomas"]


def _fact(name: str, alias: str) -> GraphTables:
    """A person who acted in Inception: a node (and an alias), a named edge, a link to a passage."""
    person, film = node_id(name), node_id("Inception")
    nodes = pa.Table.from_pylist(
        [
            {"id": person, "name": name, "type": "PERSON", "description": f"{name}, actor", "aliases": [alias]},
            {"id": film, "name": "Inception", "type": "WORK_OF_ART", "description": "", "aliases": [f"{alias}'s film"]},
        ],
        schema=NODES,
    )
    edge = {
        "id": f"e-{person}",
        "src": person,
        "dst": film,
        "src_name": name,
        "dst_name": "Inception",
        "relation": "acted in",
        "evidence": f"{name} acted in Inception.",
        "chunk_id": "inception::0",
        "doc_id": "inception",
        "confidence": 0.9,
        "extractor": "llm",
    }
    link = {"node": person, "chunk_id": "inception::0", "doc_id": "inception", "count": 1, "is_title": False}
    links = pa.Table.from_pylist([link], schema=LINKS)
    return GraphTables(nodes, pa.Table.from_pylist([edge], schema=EDGES), links, {"llm": [f"{name}::read"]})


def _seen(resources: Resources) -> dict:
    """What readers get: nodes (aliases as sets), edges and links, deep-read marks, index hits."""
    store = resources.store
    ids = [node_id(n) for n in [*PEOPLE, "Inception", "Christopher Nolan"]]
    nodes = {n["id"]: (n["name"], n["type"], n["description"], frozenset(n["aliases"])) for n in store.nodes_by_ids(ids)}
    edges = sorted((e["id"], e["src"], e["dst"], e["relation"], e["evidence"], e["extractor"]) for e in store.neighbors(ids))
    links = [(r["node"], r["chunk_id"], r["count"], r["is_title"], r["degree"]) for r in store.links(node_ids=ids)]
    reads = store.chunks_read_by([f"{n}::read" for n in PEOPLE] + ["inception::0"], "llm")
    hits = {h["id"] for name in PEOPLE for h in search_graph(resources.graph_index, name, 3, resources.config.embeddings)}
    return {"nodes": nodes, "edges": edges, "links": links, "reads": reads, "hits": hits & {node_id(n) for n in PEOPLE}}


@pytest.fixture
def enriched(gap_config, spacy_extractor):
    """The seed, one real enrichment (spaCy over the Nolan page) and three hand-made partitions."""
    resources = Resources(gap_config, extractor=spacy_extractor)
    agent_cfg = dataclasses.replace(gap_config.agent, enrich_chunks=2, expansion="template")
    assert make_agent(resources, agent_cfg).jobs.enrich("Where was the director of Inception born?", []).partition
    for i, name in enumerate(PEOPLE):
        assert resources.writer.commit(_fact(name, f"alias {i}"))
    return resources


def test_compaction_keeps_what_readers_see_and_its_rollback_restores_the_partitions(gap_config, enriched):
    graph = Path(gap_config.paths.graph)
    before_partitions = committed_partitions(graph)
    before = _seen(enriched)
    assert len(before["hits"]) == 3 and len(before["reads"]) == 4  # three marks, and the chunk their facts came from

    report = enriched.writer.compact()
    merged = report["partition"]
    assert report["replaced"] == 4 and committed_partitions(graph) == ["seed", merged]
    assert on_disk(graph) == ["seed", merged]  # the replaced partitions' files are gone ...
    kept = sorted(p.name for p in (graph / COMPACTED / merged).rglob("*.dvc"))
    assert kept == sorted(f"partition={p}.dvc" for p in before_partitions[1:] for _ in range(3))  # ... their DVC pointers kept
    assert _seen(enriched) == before
    fresh = Resources(gap_config)  # another process: nothing to repair, the same rows
    report = fresh.writer.reconcile()
    assert not report.changed and fresh.writer.verify() == [], report
    assert _seen(fresh) == before

    with pytest.raises(StorageError, match=f"'{before_partitions[2]}' was compacted into '{merged}': roll that back first"):
        fresh.writer.rollback(before_partitions[2])
    fresh.writer.rollback(merged)
    assert committed_partitions(graph) == before_partitions  # back from the DVC cache
    assert fresh.writer.verify() == [] and _seen(fresh) == before
    assert fresh.writer.rollback(before_partitions[-1])["index_rows_deleted"] == 2  # and each can go on its own again
    assert node_id(PEOPLE[-1]) not in {n["id"] for n in fresh.store.nodes_by_ids([node_id(PEOPLE[-1])])}


@pytest.mark.parametrize("where", ["before the commit point", "after the commit point"])
def test_a_killed_compaction_is_finished_or_undone_by_the_next_start(gap_config, enriched, where):
    graph = Path(gap_config.paths.graph)
    before_partitions, before = committed_partitions(graph), _seen(enriched)

    def killed(*_args, **_kwargs):
        raise KeyboardInterrupt(f"injected kill {where}")

    if where == "before the commit point":
        enriched.writer.dvc.forget_all = killed  # never reached: the partition write is killed first
        import enrich_rag.storage.graph_writer as writer_module

        real = writer_module.write_tables
        writer_module.write_tables = killed
    else:
        enriched.writer.after_partition_write = killed
    try:
        with pytest.raises(KeyboardInterrupt):
            enriched.writer.compact()
    finally:
        if where == "before the commit point":
            writer_module.write_tables = real
    if where == "after the commit point":  # as a SIGKILL while copying a DVC pointer leaves it (fault injection found it)
        half = graph / COMPACTED / enriched.writer.pending_compactions()[0] / "nodes" / ".tmp-partition=enrich-x.dvc-0d1e"
        half.parent.mkdir(parents=True, exist_ok=True)
        half.write_text("outs: [")
    fresh = Resources(gap_config)
    report = fresh.writer.reconcile()
    assert report.finished_compactions and fresh.writer.verify() == []
    assert not list(graph.rglob(".tmp-*"))
    expected = before_partitions if where == "before the commit point" else ["seed", report.finished_compactions[0]]
    assert committed_partitions(graph) == expected and on_disk(graph) == expected
    assert _seen(fresh) == before


def test_an_enrichment_past_the_threshold_compacts(gap_config, spacy_extractor):
    config = dataclasses.replace(gap_config, storage=dataclasses.replace(gap_config.storage, compact_after=2))
    resources = Resources(config, extractor=spacy_extractor)
    commits = [resources.writer.commit(_fact(name, "a")) for name in PEOPLE]
    assert [c.compacted for c in commits[:2]] == [None, None] and commits[2].compacted
    assert committed_partitions(config.paths.graph) == ["seed", commits[2].compacted]
    assert resources.writer.verify() == []


@pytest.mark.integration
def test_forgetting_many_records_survives_a_killed_writers_dvc_remove_that_outlived_it(tmp_path):
    """A SIGKILLed compaction leaves its `dvc remove` child running; it removes some pointers after the
    next start listed them. Found by `fault_injection.py --operations compact`: the next start failed."""
    from enrich_rag.storage.dvc_tracking import DvcRepo

    repo = DvcRepo(tmp_path)
    repo.init()
    folders = []
    for name in ("partition=a", "partition=b", "partition=c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "part-0.parquet").write_text(name)
        folders.append(tmp_path / name)
    repo.record(folders)
    real_run, calls = repo.run, []

    def outlived(*args):
        calls.append(args)
        if len(calls) == 1:  # the killed writer's child gets there first
            (tmp_path / "partition=a.dvc").unlink()
        return real_run(*args)

    repo.run = outlived
    repo.forget_all(folders)
    assert not list(tmp_path.glob("partition=*.dvc")) and len(calls) == 2
    assert all(f.is_dir() for f in folders)  # the data stays; only the records go
