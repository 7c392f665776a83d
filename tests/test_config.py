"""Config is strict: typos, wrong types, values out of bounds and unknown choices stop loading with one line."""

import re
from pathlib import Path

import pytest
import yaml

from enrich_rag.config import Config, EvidenceConfig, config_from_dict, load_config
from enrich_rag.errors import ConfigError
from enrich_rag.serve import settings as web_settings
from tests.conftest import PROJECT_ROOT


@pytest.mark.parametrize(
    "data, message",
    [
        ({"evidense": {"k": 2}}, "unknown section(s) evidense"),
        ({"evidence": {"kk": 2}}, "unknown key(s) in 'evidence': kk"),
        ({"agent": 5}, "section 'agent' must be a mapping"),
        ({"agent": {"max_iterations": "eight"}}, "agent.max_iterations must be an integer, got 'eight'"),
        ({"corpus": {"chunk_size": "800"}}, "corpus.chunk_size must be an integer"),
        ({"agent": {"allow_enrich": 1}}, "agent.allow_enrich must be true or false"),
        ({"evidence": {"candidates": 1_000_000_000}}, "evidence.candidates must be >= 1 and <= 200"),
        ({"evidence": {"k": 0}}, "evidence.k must be >= 1"),
        ({"agent": {"max_iterations": -1}}, "agent.max_iterations must be >= 1"),
        ({"agent": {"ppl_threshold": -1.0}}, "agent.ppl_threshold must be >= 0.0"),
        ({"extraction": {"seed_share": 0}}, "extraction.seed_share must be > 0.0"),
        ({"agent": {"expansion": "magic"}}, "agent.expansion must be one of llm, template"),
        ({"llm": {"backend": "gpt"}}, "llm.backend must be one of llamacpp, embedded, hf, openai"),
        ({"extraction": {"skip_labels": [1, 2]}}, "extraction.skip_labels must be a list of strings"),
        ({"serve": {"workers": 0}}, "serve.workers must be >= 1"),
        ({"serve": {"max_body_bytes": 10**12}}, "serve.max_body_bytes must be >= 1024 and <= 10000000"),
    ],
)
def test_bad_values_are_refused_with_one_line(data, message):
    with pytest.raises(ConfigError) as err:
        config_from_dict(data)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_open_ended_choice_passes():
    config = config_from_dict({"evidence": {"rerank": "models/my-cross-encoder"}, "agent": {"ppl_threshold": 2}})
    assert config.evidence.rerank == "models/my-cross-encoder" and config.agent.ppl_threshold == 2


def test_every_overlay_names_its_dataset_its_questions_and_a_build_of_its_own():
    """Each `configs/<name>.yaml` evaluates dataset <name> on questions that are bundled (the synthetic
    set: written by `dvc repro testset`) with methods that exist; one with a corpus of its own keeps every
    path of its build under `data/datasets/<name>`, so two datasets never share a graph. Questions written
    over another dataset's build (`eval.corpus: built`) read that build, which they never rebuild."""
    from enrich_rag.eval.methods import METHODS

    generated = {str(PROJECT_ROOT / "testsets/synthetic.jsonl")}
    for overlay in sorted((PROJECT_ROOT / "configs").glob("*.yaml")):
        config = load_config(PROJECT_ROOT / "params.yaml", overlay)
        ev, name = config.eval, overlay.stem
        assert ev.dataset == name and set(ev.methods) <= set(METHODS), overlay.name
        assert ev.questions in generated or Path(ev.questions).is_file(), overlay.name
        if config.paths.root != load_config(PROJECT_ROOT / "params.yaml").paths.root:
            root = Path(config.paths.root)
            owner = root.name if ev.over_built_corpus else name
            assert root == PROJECT_ROOT / "data/datasets" / owner and (PROJECT_ROOT / f"configs/{owner}.yaml").is_file(), overlay.name
            for built in (config.paths.chunks, config.paths.corpus_index, config.paths.graph, config.paths.graph_index):
                assert Path(built).is_relative_to(root), (overlay.name, built)


def test_a_typo_in_an_overlay_names_the_key(tmp_path: Path):
    overlay = tmp_path / "mine.yaml"
    overlay.write_text(yaml.safe_dump({"evidence": {"replacment_threshold": 0.2}}))
    with pytest.raises(ConfigError, match="replacment_threshold"):
        load_config(PROJECT_ROOT / "params.yaml", overlay)


def test_web_settings_take_their_bounds_from_the_config_fields():
    config = Config()
    assert web_settings.effective(config, {})["k"] == EvidenceConfig().k
    assert web_settings.check({"k": 20}) == {"evidence": {"k": 20}}
    for bad, message in [
        ({"k": 21}, "evidence.k must be >= 1 and <= 20, got 21"),
        ({"candidates": 0}, "evidence.candidates must be >= 1"),
        ({"candidates": 50}, "evidence.candidates must be <= 20 on the web page"),
        ({"ppl_threshold": -1.0}, "agent.ppl_threshold must be >= 0.0"),
        ({"rerank": "models/x"}, "evidence.rerank must be one of entity, none, llm"),
        ({"nope": 1}, "web setting 'nope' is not one the page may change"),
    ]:
        with pytest.raises(ConfigError, match=message):
            web_settings.check(bad)


@pytest.mark.parametrize(
    "overlay, message",
    [
        ({"eval": {"questions": "q.jsonl", "judge": {"enabeld": True}}}, "unknown key(s) in 'eval.judge': enabeld"),
        ({"eval": {"questions": "q.jsonl", "sample": "ten"}}, "eval.sample must be an integer, got 'ten'"),
        ({"eval": {"questions": "q.jsonl", "format": "squad"}}, "eval.format must be one of normalized"),
        ({"eval": {"questions": "q.jsonl", "ks": [2, "five"]}}, "eval.ks must be a list of integers"),
        ({"eval": {"questons": "q.jsonl"}}, "unknown key(s) in 'eval': questons"),
        ({"serve": {"workers": 0}}, "serve.workers must be >= 1 and <= 64, got 0"),
        ({"serve": {"query_timeout": 5}}, "unknown key(s) in 'serve': query_timeout"),
    ],
)
def test_eval_and_serve_are_sections_of_the_one_strict_config(tmp_path: Path, overlay, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(overlay))
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(PROJECT_ROOT / "params.yaml", path)


def test_a_bad_eval_key_is_one_line_from_run_evaluation(tmp_path: Path):
    import subprocess
    import sys

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"eval": {"questions": "q.jsonl", "judge": {"enabeld": True}}}))
    result = subprocess.run(
        [sys.executable, "run_evaluation.py", "--config", str(path)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 1 and len(lines) == 1 and "enabeld" in lines[0], result.stderr


def test_the_question_formats_config_accepts_are_the_ones_the_readers_know():
    from enrich_rag.config import QUESTION_FORMATS
    from enrich_rag.eval.datasets import FORMATS

    assert QUESTION_FORMATS == FORMATS


@pytest.mark.parametrize("bad", ["agent: 5\n", "agent:\n  max_iterations: eight\n", "serve: [\n", "surprise:\n  a: 1\n"])
def test_serve_with_a_bad_params_file_is_one_line_and_no_server(tmp_path: Path, bad):
    from typer.testing import CliRunner

    from enrich_rag.cli.main import app

    params = tmp_path / "params.yaml"
    params.write_text(bad)
    result = CliRunner().invoke(app, ["serve", "--params", str(params), "--port", "1"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 1 and len(lines) == 1 and lines[0].startswith("error:"), result.output


def test_the_configuration_reference_is_what_the_code_says():
    """docs/configuration.md is generated from config.py; a key added without regenerating it fails here."""
    from enrich_rag.config_reference import render
    from tests.conftest import PROJECT_ROOT

    page = render()
    assert (PROJECT_ROOT / "docs/configuration.md").read_text(encoding="utf-8") == page, "run python scripts/config_reference.py"
    assert "| `enrich_targets` | str | `ranked` | `ranked` \\| `beyond_context` \\| `random` |" in page  # choices, from the field itself
    assert "| `k` | int | `2` | >= 1, <= 20 |" in page  # bounds
    assert "## `eval.judge`" in page  # nested sections too
