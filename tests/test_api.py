"""The Python API and `enrich-rag build DIR` on folders of real files: a real build (spaCy, MiniLM,
txtai, DuckDB over Parquet, a DVC repository per workspace) and the embedded reader."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from enrich_rag import EnrichRAG
from enrich_rag.cli.main import app
from tests.conftest import PROJECT_ROOT, SMALL_CORPUS


def _params(tmp_path):
    """The project's params.yaml, read by the test model; enrichment by spaCy (no reader needed to extract)."""
    params = yaml.safe_load((PROJECT_ROOT / "params.yaml").read_text())
    params["llm"].update(backend="embedded")
    params["extraction"].update(deep="spacy")
    params["agent"].update(expansion="template")
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def _folder(path, docs):
    """One document as markdown, one as text, the rest as a .jsonl file: the three kinds a folder may hold."""
    path.mkdir()
    first, second, *rest = docs
    (path / f"{first['id']}.md").write_text(f"# {first['title']}\n\n{first['text']}\n")
    (path / f"{second['id']}.txt").write_text(second["text"] + "\n")
    (path / "more.jsonl").write_text("".join(json.dumps(d) + "\n" for d in rest))
    return path


def test_from_folder_builds_a_workspace_and_answers_with_citations_into_it(tmp_path, embedded_llm):
    params = _params(tmp_path)
    folder = _folder(tmp_path / "films", SMALL_CORPUS)
    with EnrichRAG.from_folder(folder, tmp_path / "ws-films", params, llm=embedded_llm) as rag:  # the session's model, not a second copy
        answer = rag.ask("Who directed Inception?", enrich="never")
        assert "Nolan" in answer.answer
        assert answer.citations and {c.doc_id for c in answer.citations} & {"inception.md", "nolan.txt"}
        assert [p["partition"] for p in rag.graph.partitions()] == ["seed"] and rag.graph.verify() == []
        assert rag.graph.stats()["edges"] > 0
        enriched = rag.enrich("Where was Christopher Nolan born?")  # spaCy deep, and the spaCy seed read every chunk
        assert enriched.partition is None and enriched.record()["reason"] == "no uncovered chunks found"
        assert enriched.searched  # it did search the corpus for the question
    assert (tmp_path / "ws-films/config.yaml").is_file() and (tmp_path / "ws-films/.dvc").is_dir()


def test_one_call_asks_with_abstain_a_time_limit_and_other_settings(tmp_path, embedded_llm):
    """`ask` is the one way every caller asks: `abstain` without rewriting the config, a time limit that
    stops the question before its next tool, and agent settings other than the project's."""
    import dataclasses

    import pytest

    from enrich_rag.agent.answer import NOT_FOUND
    from enrich_rag.agent.trace import QueryStopped

    folder = _folder(tmp_path / "films", SMALL_CORPUS)
    with EnrichRAG.from_folder(folder, tmp_path / "ws-films", _params(tmp_path), llm=embedded_llm) as rag:
        unsure = dataclasses.replace(rag.config.agent, sure_confidence=1.0, ppl_threshold=1e-6), None  # nothing is sure
        guessed = rag.ask("Who directed Inception?", enrich="never", settings=unsure)
        said = rag.ask("Who directed Inception?", enrich="never", abstain=True, settings=unsure)
        assert not guessed.sure and guessed.answer != NOT_FOUND and said.answer == NOT_FOUND and said.quote is None
        assert rag.config.agent.abstain is False  # the project's settings are left as they were
        with pytest.raises(QueryStopped, match="time limit"):
            rag.ask("Who directed Inception?", enrich="never", time_limit_s=0.0)
        events = list(rag.ask("Who directed Inception?", enrich="never", abstain=True, stream=True, settings=unsure))
        assert events[-1]["event"] == "answer" and events[-1]["answer"]["answer"] == NOT_FOUND


@pytest.mark.integration  # builds two folders: txtai indexes and a DVC repository each
def test_build_dir_keeps_each_folder_in_its_own_workspace(tmp_path):
    params, runner = _params(tmp_path), CliRunner()
    films = _folder(tmp_path / "films", SMALL_CORPUS)
    rivers = _folder(tmp_path / "rivers", [SMALL_CORPUS[3], SMALL_CORPUS[2], SMALL_CORPUS[0]])
    first = runner.invoke(app, ["build", str(films), "--params", str(params), "--workspace", str(tmp_path / "ws/films")])
    assert first.exit_code == 0, first.output
    assert f"--config {tmp_path / 'ws/films/config.yaml'}" in first.output.replace("\n", "")
    second = runner.invoke(app, ["build", str(rivers), "--params", str(params), "--workspace", str(tmp_path / "ws/rivers")])
    assert second.exit_code == 0, second.output
    for name, passages in (("films", 5), ("rivers", 3)):
        summary = runner.invoke(app, ["summary", "--params", str(params), "--config", str(tmp_path / f"ws/{name}/config.yaml"), "--json"])
        assert json.loads(summary.stdout)["passages"] == passages, name  # the second build left the first alone
    again = runner.invoke(app, ["build", str(films), "--params", str(params), "--workspace", str(tmp_path / "ws/films")])
    assert again.exit_code == 0 and "building" not in again.output  # built with these settings: nothing to do
    missing = runner.invoke(app, ["build", str(tmp_path / "nope"), "--params", str(params)])
    assert missing.exit_code == 1 and "not a folder" in missing.output
