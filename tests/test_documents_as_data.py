"""Documents as data through the front door and the CLI: text added from Python and stdin, the
documents listed (built, added, removed), and passages searched without a reader. Real build (txtai,
DuckDB over Parquet, spaCy, a DVC repository); no reader is loaded by any of these."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from enrich_rag import EnrichRAG
from enrich_rag.cli.main import app
from enrich_rag.errors import EnrichRagError

TENET = "# Tenet\n\nTenet is a 2020 film directed by Christopher Nolan. John David Washington stars in Tenet.\n"


@pytest.fixture
def rag(gap_config):
    rag = EnrichRAG(gap_config)
    yield rag
    rag.close()


def test_text_added_from_python_is_listed_searched_and_removable(rag):
    update = rag.add_text(TENET, doc_id="notes/tenet")
    assert update.added == ["notes/tenet"] and update.partition.startswith("add-")
    assert rag.add_text(TENET, doc_id="notes/tenet").unchanged == ["notes/tenet"]
    listed = {d.doc_id: d for d in rag.documents()}
    assert listed["notes/tenet"].status == "added" and listed["notes/tenet"].origin == update.partition
    assert listed["notes/tenet"].title == "Tenet" and listed["notes/tenet"].chunks == 1
    assert listed["inception"].status == "built" and listed["inception"].origin == "build"

    found = rag.search("Which 2020 film stars John David Washington?", k=3)
    assert found[0].doc_id == "notes/tenet" and found[0].score == 1.0 and len(found) == 3
    assert [p.score for p in found] == sorted((p.score for p in found), reverse=True)
    plain = rag.search("Which 2020 film stars John David Washington?", k=2, graph=False)
    assert plain[0].doc_id == "notes/tenet" and len(plain) == 2

    rag.remove("notes/tenet")
    gone = {d.doc_id: d for d in rag.documents()}["notes/tenet"]
    assert gone.status == "removed" and gone.chunks == 0
    assert all(p.doc_id != "notes/tenet" for p in rag.search("Which 2020 film stars John David Washington?", k=5))


def test_bad_text_and_bad_k_are_one_line_errors(rag):
    with pytest.raises(EnrichRagError, match="the text to add is empty"):
        rag.add_text("   ")
    with pytest.raises(EnrichRagError, match="k must be between 1 and 100"):
        rag.search("Inception", k=0)


def test_the_cli_adds_stdin_lists_documents_and_searches(gap_config, tmp_path):
    params = tmp_path / "cli-params.yaml"
    params.write_text(yaml.safe_dump({"paths": dict(gap_config.paths.__dict__), "corpus": dict(gap_config.corpus.__dict__)}))
    runner = CliRunner()
    added = runner.invoke(app, ["add", "-", "--id", "notes/tenet", "--params", str(params), "--json"], input=TENET)
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout)["added"] == ["notes/tenet"]

    listed = runner.invoke(app, ["docs", "--params", str(params), "--json"])
    rows = {d["doc_id"]: d for d in json.loads(listed.stdout)}
    assert rows["notes/tenet"]["title"] == "Tenet" and rows["notes/tenet"]["status"] == "added" and "inception" in rows

    found = runner.invoke(app, ["search", "Which 2020 film stars John David Washington?", "-k", "2", "--params", str(params), "--json"])
    hits = json.loads(found.stdout)
    assert [h["doc_id"] for h in hits][0] == "notes/tenet" and set(hits[0]) >= {"chunk_id", "title", "text", "score"}

    mixed = runner.invoke(app, ["add", "-", "README.md", "--params", str(params)])
    assert mixed.exit_code == 1 and "added on its own" in mixed.stderr
