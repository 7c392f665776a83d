"""`enrich-rag add` / `remove` on the real small build (Parquet, DuckDB, txtai, spaCy, a real DVC
repository, and the embedded Gemma reader where a question is answered): added documents are found,
linked both ways and cited; removed ones are never read or cited again; every change is one commit
that a rollback undoes, a kill mid-way is repaired by the next start, and a compaction keeps it all."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from enrich_rag.errors import InputDataError
from enrich_rag.index.embeddings import search
from enrich_rag.resources import Resources
from enrich_rag.stages.corpus_update import CorpusUpdate, add_documents, read_documents, remove_documents
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.partitions import committed_partitions
from tests.conftest import make_agent

TENET = "# Tenet\n\nTenet is a 2020 film directed by Christopher Nolan. John David Washington stars in Tenet.\n"
KEMBLE = "# Kemble\n\nKemble is a village in Gloucestershire with a railway station.\n"


def _resources(config, extractor, llm=None) -> Resources:
    return Resources(config, llm=llm, seed_extractor=extractor)  # the session's spaCy: the model loads once


def _add(resources: Resources, paths: list[Path]) -> CorpusUpdate:
    """What `EnrichRAG.add` does, over these resources."""
    docs = read_documents(list(paths), resources.config.corpus.format, resources.config.corpus.source)
    return add_documents(resources.config, resources.passages, resources.writer, lambda: resources.seed_extractor, docs)


def _remove(resources: Resources, doc_ids: list[str]) -> CorpusUpdate:
    return remove_documents(resources.passages, resources.writer, doc_ids)


def _docs(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "new-docs"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("_", ".")).write_text(text, encoding="utf-8")
    return folder


def _corpus_ids(resources: Resources, query: str) -> list[str]:
    return [h["id"] for h in search(resources.corpus_index, query, 5, resources.config.embeddings, columns=())]


def test_added_documents_are_searched_linked_both_ways_and_skipped_when_unchanged(gap_config, spacy_extractor, tmp_path):
    resources = _resources(gap_config, spacy_extractor)
    before = resources.title_gazetteer()
    assert resources.title_gazetteer() is before and before.named_titles("Tenet, a film") == []  # kept while nothing changes
    folder = _docs(tmp_path, tenet_md=TENET, kemble_md=KEMBLE)
    update = _add(resources, [folder])
    assert resources.title_gazetteer().named_titles("Tenet, a film") == ["Tenet"]  # the question-time titles follow the corpus
    assert update.partition and update.partition.startswith("add-")
    assert sorted(update.added) == ["kemble.md", "tenet.md"] and update.chunks_added == 2
    tenet = resources.passages.by_doc_ids(["tenet.md"])
    assert [p.title for p in tenet] == ["Tenet"] and tenet[0].id.startswith("tenet.md::v")
    assert _corpus_ids(resources, "Tenet 2020 film John David Washington")[0] == tenet[0].id
    # Forward: the new page names an old one; backward: the old Thames page names the new "Kemble".
    assert any(link["chunk_id"] == tenet[0].id for link in resources.store.links(node_ids=[node_id("Christopher Nolan")]))
    assert "thames::c0" in {link["chunk_id"] for link in resources.store.links(node_ids=[node_id("Kemble")])}
    assert resources.writer.verify() == []
    assert Path(gap_config.paths.graph, "chunks", f"partition={update.partition}.dvc").is_file()

    again = _add(resources, [folder])
    assert again.partition is None and sorted(again.unchanged) == ["kemble.md", "tenet.md"]


def test_a_changed_document_replaces_its_old_version(gap_config, spacy_extractor, tmp_path):
    resources = _resources(gap_config, spacy_extractor)
    folder = _docs(tmp_path, tenet_md=TENET)
    _add(resources, [folder])
    old = [p.id for p in resources.passages.by_doc_ids(["tenet.md"])]
    (folder / "tenet.md").write_text(TENET.replace("2020", "2021"), encoding="utf-8")
    update = _add(resources, [folder])
    assert update.changed == ["tenet.md"] and update.chunks_removed == 1
    now = resources.passages.by_doc_ids(["tenet.md"])
    assert len(now) == 1 and now[0].id not in old and "2021" in now[0].text
    assert old[0] not in _corpus_ids(resources, "Tenet 2020 film")
    assert resources.writer.verify() == []


def test_removed_documents_are_hidden_and_a_rollback_brings_them_back(gap_config, spacy_extractor):
    resources = _resources(gap_config, spacy_extractor)
    dicaprio = node_id("Leonardo DiCaprio")
    assert resources.store.neighbors([dicaprio])
    title = resources.passages.by_doc_ids(["dicaprio"])[0].title
    assert resources.title_gazetteer().named_titles(f"a film with {title}") == [title]
    update = _remove(resources, ["dicaprio"])
    assert resources.title_gazetteer().named_titles(f"a film with {title}") == []
    assert update.partition and update.partition.startswith("remove-") and update.chunks_removed == 1
    assert resources.passages.by_doc_ids(["dicaprio"]) == []
    assert "dicaprio::c0" not in _corpus_ids(resources, "Leonardo DiCaprio American actor Academy Award")
    assert not [e for e in resources.store.neighbors([dicaprio]) if e["chunk_id"] == "dicaprio::c0"]
    assert not resources.store.links(chunk_ids=["dicaprio::c0"])
    assert resources.writer.verify() == []
    listed = {row["partition"]: row for row in resources.writer.partitions()}
    assert listed[update.partition]["chunks_removed"] == 1 and listed[update.partition]["dvc"] == "dvc add"

    resources.writer.rollback(update.partition)
    assert [p.id for p in resources.passages.by_doc_ids(["dicaprio"])] == ["dicaprio::c0"]
    assert "dicaprio::c0" in _corpus_ids(resources, "Leonardo DiCaprio American actor Academy Award")
    assert resources.writer.verify() == []


def test_bad_input_is_one_line_and_writes_nothing(gap_config, spacy_extractor, tmp_path):
    resources = _resources(gap_config, spacy_extractor)
    before = committed_partitions(Path(gap_config.paths.graph))
    with pytest.raises(InputDataError, match="no document 'nope'"):
        _remove(resources, ["nope"])
    with pytest.raises(InputDataError, match="no such file or folder"):
        _add(resources, [tmp_path / "missing"])
    (tmp_path / "bad.md").write_bytes(b"# Bad\n\xff\xfe")
    with pytest.raises(InputDataError, match="not valid UTF-8"):
        _add(resources, [tmp_path / "bad.md"])
    assert committed_partitions(Path(gap_config.paths.graph)) == before


def test_a_kill_between_partition_and_indexes_is_repaired_by_the_next_start(gap_config, spacy_extractor, tmp_path):
    resources = _resources(gap_config, spacy_extractor)

    def crash(partition: str) -> None:
        raise KeyboardInterrupt  # stands in for a kill: the partition is committed, neither index is written

    resources.writer.after_partition_write = crash
    with pytest.raises(KeyboardInterrupt):
        _add(resources, [_docs(tmp_path, tenet_md=TENET)])
    resources.close()
    # A kill inside the corpus index's save leaves its staging copy beside it (found by fault injection).
    corpus_index = Path(gap_config.paths.corpus_index)
    staged = corpus_index.parent / f".tmp-{corpus_index.name}-0badc0de"
    staged.mkdir()
    restarted = _resources(gap_config, spacy_extractor)
    problems = restarted.writer.verify()
    assert any("corpus index" in p for p in problems) and any("leftovers" in p for p in problems)
    report = restarted.writer.reconcile()
    assert report.corpus == {"upserted": 1, "deleted": 0} and report.reindexed
    assert f"removed {staged.name}" in report.removed_leftovers and not staged.exists()
    assert restarted.writer.verify() == []
    tenet = restarted.passages.by_doc_ids(["tenet.md"])[0].id
    assert _corpus_ids(restarted, "Tenet 2020 film John David Washington")[0] == tenet


def test_compaction_keeps_added_and_removed_documents(gap_config, spacy_extractor, tmp_path):
    resources = _resources(gap_config, spacy_extractor)
    _add(resources, [_docs(tmp_path, tenet_md=TENET)])
    added = _add(resources, [_docs(tmp_path, kemble_md=KEMBLE)])
    _remove(resources, ["dicaprio", "kemble.md"])
    live = {p.id for p in resources.passages.by_doc_ids(["tenet.md", "kemble.md", "dicaprio", "london"])}
    result = resources.writer.compact()
    assert result and result["replaced"] == 3
    assert {p.id for p in resources.passages.by_doc_ids(["tenet.md", "kemble.md", "dicaprio", "london"])} == live
    assert resources.writer.verify() == []
    merged = resources.store.rows_of([result["partition"]])[1]
    assert not [e for e in merged if e["doc_id"] == "kemble.md"]  # added, then removed: dropped for good
    assert added.partition not in committed_partitions(Path(gap_config.paths.graph))


def test_questions_cite_added_documents_and_never_removed_ones(gap_config, spacy_extractor, embedded_llm, tmp_path):
    config = dataclasses.replace(gap_config, agent=dataclasses.replace(gap_config.agent, max_enrich_rounds=0))
    resources = _resources(config, spacy_extractor, embedded_llm)
    _add(resources, [_docs(tmp_path, tenet_md=TENET)])
    agent = make_agent(resources)
    answer = agent.answer("Who stars in Tenet?", enrich="never")
    assert any(c.chunk_id.startswith("tenet.md::") for c in answer.citations)

    cited = agent.answer("Which award did Leonardo DiCaprio win?", enrich="never")
    assert any(c.chunk_id == "dicaprio::c0" for c in cited.citations)
    _remove(resources, ["dicaprio"])
    after = agent.answer("Which award did Leonardo DiCaprio win?", enrich="never")
    assert not [c for c in after.citations if c.doc_id == "dicaprio" or c.chunk_id == "dicaprio::c0"]
