import json

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
