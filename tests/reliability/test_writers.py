"""Writers under faults, on the real small build (Parquet, DuckDB, txtai, a real DVC repository):
two writers with their own index copies (as two processes have), a rollback cut short, a damaged
partition restored from the DVC cache or removed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from enrich_rag.index.graph_index import search_graph
from enrich_rag.resources import Resources
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.partitions import GraphTables, committed_partitions
from enrich_rag.storage.schema import EDGES, LINKS, NODES
from tests.conftest import make_agent

QUESTION = "Where was the director of Inception born?"


def _enrich(config, extractor):
    """One EnrichGraph round (template expansion, no LLM) on fresh resources; returns them and the result."""
    resources = Resources(config, extractor=extractor)
    agent_cfg = dataclasses.replace(config.agent, enrich_chunks=2, expansion="template")
    return resources, make_agent(resources, agent_cfg).jobs.enrich(QUESTION, [])


def _hand_made(name: str):
    nodes = pa.Table.from_pylist([{"id": node_id(name), "name": name, "type": "PERSON", "description": "", "aliases": []}], schema=NODES)
    return GraphTables(nodes, EDGES.empty_table(), LINKS.empty_table())


def test_a_second_writer_with_a_stale_index_copy_keeps_the_first_writers_rows(gap_config, spacy_extractor):
    late = Resources(gap_config, extractor=spacy_extractor)
    _ = late.graph_index  # loaded before the other writer commits, as a second process would hold it
    first, result = _enrich(gap_config, spacy_extractor)
    assert result.partition and result.indexed > 0
    commit = late.writer.commit(_hand_made("Tom Hardy"))
    assert commit.indexed == 1
    fresh = Resources(gap_config)
    indexed = fresh.writer.indexed_ids()
    assert result.partition in indexed and commit.partition in indexed  # without the reload the second save drops the first's rows
    assert fresh.writer.verify() == []
    assert node_id("University College London") in {
        h["id"] for h in search_graph(late.graph_index, "University College London", 3, gap_config.embeddings)
    }


def test_a_rollback_cut_short_is_finished_by_reconcile(gap_config, spacy_extractor):
    resources, result = _enrich(gap_config, spacy_extractor)
    graph = Path(gap_config.paths.graph)
    assert (graph / "nodes" / f"partition={result.partition}.dvc").is_file()

    def killed(path):
        raise KeyboardInterrupt("injected kill before the DVC records go")

    resources.writer.dvc.forget = killed
    with pytest.raises(KeyboardInterrupt):
        resources.writer.rollback(result.partition)
    fresh = Resources(gap_config)
    assert result.partition not in committed_partitions(graph)
    problems = fresh.writer.verify()
    assert any("rollbacks cut short" in p for p in problems)
    assert not any("not on disk" in p for p in problems)  # being removed: no hint to bring it back
    report = fresh.writer.reconcile()
    assert report.finished_rollbacks == [result.partition]
    assert not (graph / "nodes" / f"partition={result.partition}.dvc").exists()
    assert fresh.writer.verify() == []


def _truncate(path: Path) -> bytes:
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])
    return good


def test_a_damaged_partition_is_restored_from_the_dvc_cache(gap_config, spacy_extractor):
    _, result = _enrich(gap_config, spacy_extractor)
    edges = Path(gap_config.paths.graph) / "edges" / f"partition={result.partition}" / "part-0.parquet"
    good = _truncate(edges)
    resources = Resources(gap_config)
    assert resources.store.quarantined().keys() == {result.partition}
    assert resources.store.node(node_id("Inception"))  # the rest of the graph still answers
    assert not resources.writer.reconcile().recorded  # the damaged copy is never recorded over the good one
    assert any("damaged partition" in p and "graph repair" in p for p in resources.writer.verify())
    assert resources.writer.repair() == {result.partition: "restored from the DVC cache"}
    assert edges.read_bytes() == good
    assert resources.writer.verify() == [] and not resources.store.quarantined()


def test_a_damaged_partition_without_a_dvc_copy_is_removed_with_its_index_rows(gap_config, spacy_extractor):
    _, result = _enrich(gap_config, spacy_extractor)
    graph = Path(gap_config.paths.graph)
    for table in ("nodes", "edges", "links"):  # as if DVC never recorded it
        (graph / table / f"partition={result.partition}.dvc").unlink()
    _truncate(graph / "links" / f"partition={result.partition}" / "part-0.parquet")
    resources = Resources(gap_config)
    assert resources.writer.repair() == {result.partition: "removed with its index rows (no DVC copy)"}
    assert result.partition not in committed_partitions(graph)
    assert result.partition not in resources.writer.indexed_ids()
    assert resources.writer.verify() == []


def test_rollback_works_on_a_damaged_partition(gap_config, spacy_extractor):
    _, result = _enrich(gap_config, spacy_extractor)
    _truncate(Path(gap_config.paths.graph) / "nodes" / f"partition={result.partition}" / "part-0.parquet")
    resources = Resources(gap_config)
    report = resources.writer.rollback(result.partition)
    assert report["index_rows_deleted"] == result.indexed
    assert resources.writer.verify() == []


def test_an_enrichment_that_finds_nothing_new_writes_no_partition(gap_config, spacy_extractor):
    from enrich_rag.agent.enrich_graph import enrich_graph
    from enrich_rag.extract.assemble import graph_tables
    from enrich_rag.storage.passages import read_passages

    resources = Resources(gap_config, extractor=spacy_extractor)
    chunks = read_passages(gap_config.paths.chunks)
    seen = [p for p in chunks if p.doc_id == "inception"]  # the seed has read it
    again = resources.store.only_new(graph_tables(spacy_extractor.extract(seen)))
    assert (again.nodes.num_rows, again.edges.num_rows, again.links.num_rows) == (0, 0, 0)

    class Rereads:  # the real extractor, handed a chunk the seed already holds whatever it is asked to read
        def extract(self, _chunks):
            return spacy_extractor.extract(seen)

    graph = Path(gap_config.paths.graph)
    before = committed_partitions(graph), sorted(p.name for p in graph.rglob("*.dvc"))
    result = enrich_graph(
        QUESTION,
        [],
        corpus=resources.retrieval().corpus,
        store=resources.store,
        extractor=Rereads,
        writer=resources.writer,
        llm=None,
        limit_chunks=1,
        candidates=[p for p in chunks if p.doc_id == "nolan"],
    )
    assert result.new_chunks and result.partition is None and result.record()["reason"] == "nothing new in the chunks read"
    assert (committed_partitions(graph), sorted(p.name for p in graph.rglob("*.dvc"))) == before


def test_two_writers_that_read_the_same_chunk_commit_its_facts_once(gap_config, spacy_extractor):
    from enrich_rag.extract.assemble import graph_tables
    from enrich_rag.storage.passages import read_passages

    nolan = [p for p in read_passages(gap_config.paths.chunks) if p.doc_id == "nolan"]
    tables = graph_tables(spacy_extractor.extract(nolan))  # both extracted it before either committed
    first, second = Resources(gap_config), Resources(gap_config)
    _ = second.graph_index  # loaded now, as a second process would hold it
    commit = first.writer.commit(tables)
    assert commit is not None and commit.indexed > 0
    assert second.writer.commit(tables) is None  # filtered under the lock against what the first committed
    assert committed_partitions(Path(gap_config.paths.graph)) == ["seed", commit.partition]
    assert Resources(gap_config).writer.verify() == []


def test_a_deep_read_that_found_nothing_is_recorded_so_no_later_question_reads_it_again(gap_config):
    from enrich_rag.agent.enrich_graph import enrich_graph
    from enrich_rag.extract.base import Extraction
    from enrich_rag.storage.passages import read_passages

    resources = Resources(gap_config)
    nolan = [p for p in read_passages(gap_config.paths.chunks) if p.doc_id == "nolan"][:1]
    read: list[list[str]] = []

    class FindsNothing:  # stands in for the LLM extractor on a chunk that states no fact (its parsing is tested with a real model)
        def extract(self, chunks):
            read.append([c.id for c in chunks])
            return Extraction()

    def enrich(store):
        return enrich_graph(
            QUESTION,
            [],
            corpus=resources.retrieval().corpus,
            store=store,
            extractor=FindsNothing,
            writer=resources.writer,
            llm=None,
            limit_chunks=1,
            candidates=nolan,
            deep="llm",
            targets="ranked",
        )

    first = enrich(resources.store)
    assert read[0] == [nolan[0].id] and first.partition and not first.grew
    assert first.record()["reason"] == "nothing new in the chunks read"
    fresh = Resources(gap_config)  # another process sees the mark through the partition's file
    assert fresh.store.chunks_read_by([nolan[0].id], "llm") == {nolan[0].id}
    second = enrich(fresh.store)
    assert nolan[0].id not in second.new_chunks  # not read again: the expansion query's hits are next
    assert fresh.writer.verify() == []
    resources.writer.rollback(first.partition)
    assert Resources(gap_config).store.chunks_read_by([nolan[0].id], "llm") == set()  # the rollback undoes the mark
