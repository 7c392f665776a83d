import json

import pytest

from typer.testing import CliRunner

from enrich_rag.cli.main import app


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


def test_demo_without_questions_on_a_plain_corpus_is_one_error(built_small, tmp_path):
    import yaml

    params = tmp_path / "plain.yaml"
    params.write_text(yaml.safe_dump({"paths": dict(built_small.paths.__dict__), "corpus": dict(built_small.corpus.__dict__)}))
    result = CliRunner().invoke(app, ["demo", "--params", str(params)])
    assert result.exit_code == 1 and result.output.startswith("error: demo needs questions") and "Traceback" not in result.output


@pytest.mark.slow  # the real reader answers
def test_demo_answers_questions_with_gold_citations_and_seconds(built_small, tmp_path):
    import yaml

    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "Who directed Inception?", "answers": ["Christopher Nolan"]}) + "\n"
                         + json.dumps({"id": "q2", "question": "Where was Christopher Nolan born?", "answers": ["London"]}) + "\n")
    params = tmp_path / "demo-params.yaml"
    params.write_text(yaml.safe_dump({"paths": dict(built_small.paths.__dict__), "llm": {"backend": "llamacpp", "model": "gemma-270m"}}))
    result = CliRunner().invoke(app, ["demo", "--params", str(params), "--questions", str(questions), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["gold"] for r in rows] == [["Christopher Nolan"], ["London"]]
    assert all(r["seconds"] > 0 and r["citations"] for r in rows)
    assert "Nolan" in rows[0]["answer"] and rows[0]["correct"] == (rows[0]["answer"] == "Christopher Nolan")
