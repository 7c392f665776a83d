import json

import pytest
from typer.testing import CliRunner

from enrich_rag.cli.main import app
from tests.conftest import make_agent


def _params(config, tmp_path):
    """A params.yaml whose paths point at the test's build."""
    import yaml

    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({"paths": {k: v for k, v in config.paths.__dict__.items()}}))
    return path


def test_graph_stats_show_and_summary(built_small, tmp_path):
    params = _params(built_small, tmp_path)
    runner = CliRunner()
    stats = runner.invoke(app, ["graph", "stats", "--params", str(params), "--json"])
    assert stats.exit_code == 0, stats.output
    data = json.loads(stats.stdout)
    assert data["partitions"][0]["partition"] == "seed" and data["edges"] > 0
    show = runner.invoke(app, ["graph", "show", "christopher nolan", "--params", str(params), "--json"])
    assert show.exit_code == 0
    shown = json.loads(show.stdout)
    assert shown["node"]["name"] == "Christopher Nolan"
    assert any(e["relation"] == "directed" and e["dst_name"] == "Inception" for e in shown["edges"])
    summary = runner.invoke(app, ["summary", "--params", str(params), "--json"])
    assert json.loads(summary.stdout)["passages"] == 5


def test_errors_are_one_line_with_nonzero_exit(built_small, tmp_path):
    params = _params(built_small, tmp_path)
    result = CliRunner().invoke(app, ["graph", "show", "x'); DROP TABLE nodes; --", "--params", str(params)])
    assert result.exit_code == 1 and "no entity matching" in result.output
    missing = CliRunner().invoke(app, ["graph", "stats", "--params", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 1 and "config file not found" in missing.output


def test_demo_on_a_folder_without_docs_is_one_error(tmp_path):
    result = CliRunner().invoke(app, ["demo", "--folder", str(tmp_path)])
    assert result.exit_code == 1 and result.output.startswith(f"error: {tmp_path}: no docs/ folder") and "Traceback" not in result.output


@pytest.mark.slow  # the real reader answers
def test_demo_answers_questions_with_gold_citations_and_seconds(built_small, tmp_path):
    import yaml

    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        json.dumps({"id": "q1", "question": "Who directed Inception?", "answers": ["Christopher Nolan"]})
        + "\n"
        + json.dumps({"id": "q2", "question": "Where was Christopher Nolan born?", "answers": ["London"]})
        + "\n"
    )
    params = tmp_path / "demo-params.yaml"
    params.write_text(yaml.safe_dump({"paths": dict(built_small.paths.__dict__), "llm": {"backend": "llamacpp", "model": "gemma-270m"}}))
    result = CliRunner().invoke(app, ["demo", "--params", str(params), "--questions", str(questions), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    rows = report["questions"]
    assert report["built_s"] is None and report["ready_s"] > 0  # asked over the build it was given
    assert [r["gold"] for r in rows] == [["Christopher Nolan"], ["London"]]
    assert all(r["seconds"] > 0 and r["citations"] and r["reader_calls"] >= 1 for r in rows)
    assert rows[0]["answered_at_s"] >= report["ready_s"]
    assert "Nolan" in rows[0]["answer"] and rows[0]["correct"] == (rows[0]["answer"] == "Christopher Nolan")


def test_graph_verify_finds_a_killed_rollback_and_repair_finishes_it(gap_config, spacy_extractor, tmp_path):
    """A rollback killed before its DVC records went: verify says so (exit 1), --repair finishes it (exit 0)."""
    import dataclasses

    from enrich_rag.resources import Resources

    resources = Resources(gap_config, extractor=spacy_extractor)
    agent = make_agent(resources, dataclasses.replace(gap_config.agent, expansion="template"))
    partition = agent.jobs.enrich("Where was Christopher Nolan born?", []).partition
    assert partition

    def killed(path):
        raise KeyboardInterrupt("injected kill before the DVC records go")

    resources.writer.dvc.forget = killed
    with pytest.raises(KeyboardInterrupt):
        resources.writer.rollback(partition)
    params = _params(gap_config, tmp_path)
    runner = CliRunner()
    found = runner.invoke(app, ["graph", "verify", "--params", str(params)])
    assert found.exit_code == 1 and "rollbacks cut short" in found.output and "dvc checkout" not in found.output
    repaired = runner.invoke(app, ["graph", "verify", "--repair", "--params", str(params), "--json"])
    assert repaired.exit_code == 0, repaired.output
    assert json.loads(repaired.stdout)["consistent"] is True
    again = runner.invoke(app, ["graph", "verify", "--params", str(params)])
    assert again.exit_code == 0 and "consistent" in again.output


def test_query_goes_to_a_running_server_and_enriches_only_with_its_token(gap_config, embedded_llm, spacy_extractor, tmp_path):
    import socket
    import threading
    import time

    import uvicorn

    from enrich_rag.api import EnrichRAG
    from enrich_rag.serve.app import create_app
    from enrich_rag.serve.client import advertise, find_server

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    session = EnrichRAG(gap_config, llm=embedded_llm, extractor=spacy_extractor)
    server = uvicorn.Server(uvicorn.Config(create_app(gap_config, session), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}"
        params = _params(gap_config, tmp_path)
        assert find_server(gap_config.paths.root) is None  # nothing advertised yet
        advertise(gap_config.paths.root, url)
        assert find_server(gap_config.paths.root) == url
        result = CliRunner().invoke(app, ["query", "Who directed Inception?", "--no-enrich", "--params", str(params), "--json"])
        assert result.exit_code == 0, result.output
        assert f"answered by the server at {url}" in result.stderr
        answer = json.loads(result.stdout)
        assert "Nolan" in answer["answer"] and answer["citations"][0]["chunk_id"].startswith("inception::")
        # The token file sits beside the data, so this user's CLI may enrich through the server.
        from enrich_rag.serve.client import ask, read_token

        assert read_token(gap_config.paths.root)
        refused = CliRunner().invoke(app, ["query", "Who?", "--server", "http://127.0.0.1:9", "--params", str(params)])
        assert refused.exit_code == 1 and "no server answering at http://127.0.0.1:9" in refused.output
        events = list(ask(url, "Who directed Inception?", True, None, 60))  # the server's stream
        assert [e["event"] for e in events][:2] == ["admitted", "step"] and events[-1]["event"] == "answer"
        assert events[-1]["answer"]["read_only"] is True  # no token: reads only
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        session.close()


def test_graph_export_writes_versions_and_an_answers_subgraph_as_graphml(gap_config, spacy_extractor, tmp_path):
    import dataclasses

    import networkx as nx

    from enrich_rag.resources import Resources

    resources = Resources(gap_config, extractor=spacy_extractor)
    partition = (
        make_agent(resources, dataclasses.replace(gap_config.agent, expansion="template"))
        .jobs.enrich("Where was Christopher Nolan born?", [])
        .partition
    )
    resources.close()
    params, runner = _params(gap_config, tmp_path), CliRunner()
    before, after = tmp_path / "seed.graphml", tmp_path / "now.graphml"
    assert runner.invoke(app, ["graph", "export", str(before), "--upto", "seed", "--params", str(params)]).exit_code == 0
    assert runner.invoke(app, ["graph", "export", str(after), "--params", str(params)]).exit_code == 0
    seed, now = nx.read_graphml(before), nx.read_graphml(after)

    def born(graph):
        return [d for *_, d in graph.edges(data=True) if "born in London" in d["evidence"]]

    assert not born(seed) and born(now)  # the seed never read his page; the enrichment did
    assert now.number_of_edges() > seed.number_of_edges()
    assert {d["partition"] for *_, d in now.edges(data=True)} == {"seed", partition}
    assert all(d["chunk_id"] and d["evidence"] for *_, d in now.edges(data=True))  # every fact keeps its provenance
    missing = runner.invoke(app, ["graph", "export", str(tmp_path / "x.graphml"), "--upto", "enrich-nope", "--params", str(params)])
    assert missing.exit_code == 1 and "no partition 'enrich-nope'" in missing.output

    saved = tmp_path / "answer.json"
    saved.write_text(
        json.dumps(
            {
                "subgraph": {
                    "nodes": [
                        {"id": "christopher nolan", "label": "Christopher Nolan", "kind": "entity"},
                        {"id": "p:nolan::c0", "label": "Christopher Nolan", "kind": "passage"},
                    ],
                    "edges": [{"src": "christopher nolan", "dst": "p:nolan::c0", "kind": "title"}],
                    "context": ["nolan::c0"],
                }
            }
        )
    )
    assert runner.invoke(app, ["graph", "export", str(tmp_path / "a.graphml"), "--answer", str(saved)]).exit_code == 0
    tree = nx.read_graphml(tmp_path / "a.graphml")
    assert tree.nodes["p:nolan::c0"]["context"] is True and tree.nodes["christopher nolan"]["context"] is False
    bad = runner.invoke(app, ["graph", "export", str(tmp_path / "b.graphml"), "--answer", str(params)])
    assert bad.exit_code == 1 and "not an answer saved" in bad.output


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    from typer.testing import CliRunner

    from enrich_rag.cli.main import app

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"enrich-rag {version('enrich-rag')}\n"


def test_an_answer_with_a_confidence_says_it_and_why_it_is_unsure(capsys):
    """The CLI prints the corpus model's confidence beside the perplexity, and an unsure answer says its
    chance of being wrong; without a model it gives the perplexity against the threshold, as before."""
    from enrich_rag.agent.answer import Answer
    from enrich_rag.agent.trace import Trace
    from enrich_rag.cli.main import _print_answer

    unsure = Answer(
        question="Q?",
        answer="London",
        perplexity=1.2,
        sure=False,
        citations=[],
        subgraph={},
        trace=Trace("Q?"),
        threshold=1.05,
        confidence=0.31,
    )
    _print_answer(unsure, as_json=False)
    out = " ".join(capsys.readouterr().out.split())
    assert "confidence: 0.31, perplexity 1.20 (unsure)" in out and "a 69% chance of being wrong" in out
    assert Answer.from_dict(unsure.to_dict()).confidence == 0.31  # the server's answer keeps it

    _print_answer(
        Answer(question="Q?", answer="London", perplexity=1.2, sure=False, citations=[], subgraph={}, trace=Trace("Q?"), threshold=1.05),
        as_json=False,
    )
    out = " ".join(capsys.readouterr().out.split())
    assert "confidence" not in out and "perplexity 1.20, threshold 1.05" in out


def test_graph_learned_lists_facts_and_forget_hides_one_until_rolled_back(gap_config, spacy_extractor, tmp_path):
    """Facts learned through the loop's own commit (a fact built as the loop builds one, real graph and
    DVC); the CLI lists them, forgets one, and its rollback brings it back."""
    from enrich_rag.evidence.learned_facts import learned_fact
    from enrich_rag.resources import Resources

    resources = Resources(gap_config, extractor=spacy_extractor)
    (passage,) = resources.passages.by_ids(["inception::c0"])
    fact = learned_fact("Who directed Inception?", "Christopher Nolan", 1.02, [passage], ["Inception"], "qwen")
    assert fact is not None and fact.evidence == "Christopher Nolan directed Inception."
    assert make_agent(resources).jobs.learn([fact])["facts"] == 1
    resources.close()
    params, runner = _params(gap_config, tmp_path), CliRunner()
    listed = runner.invoke(app, ["graph", "learned", "--params", str(params), "--json"])
    (row,) = json.loads(listed.output)
    assert row["question"] == "Who directed Inception?" and row["answer"] == "Christopher Nolan" and row["reader"] == "qwen"
    forgot = runner.invoke(app, ["graph", "forget", row["id"], "--params", str(params), "--json"])
    assert forgot.exit_code == 0, forgot.output
    assert json.loads(runner.invoke(app, ["graph", "learned", "--params", str(params), "--json"]).output) == []
    unknown = runner.invoke(app, ["graph", "forget", "e-nope", "--params", str(params)])
    assert unknown.exit_code != 0 and "no fact 'e-nope'" in unknown.output and len(unknown.output.strip().splitlines()) == 1
    undo = runner.invoke(app, ["graph", "rollback", json.loads(forgot.output)["partition"], "--params", str(params)])
    assert undo.exit_code == 0, undo.output
    assert [r["id"] for r in json.loads(runner.invoke(app, ["graph", "learned", "--params", str(params), "--json"]).output)] == [row["id"]]
