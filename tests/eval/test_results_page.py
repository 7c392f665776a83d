"""The results page is generated from committed files, and the committed page is what they give."""

import json
import subprocess
import sys

from enrich_rag.eval.results_page import render
from tests.conftest import PROJECT_ROOT


def test_the_committed_results_page_matches_its_sources():
    result = subprocess.run(
        [sys.executable, "scripts/results_page.py", "--check"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_every_table_names_its_file_and_shows_intervals(tmp_path):
    run = tmp_path / "results/d/10q-seed0-r"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(
        json.dumps(
            {
                "dataset": "d",
                "run_id": "10q-seed0-r",
                "questions": 10,
                "llm_model": "r",
                "methods": {"a": {"n": 10, "em": 0.3, "em_ci": [0.1, 0.6]}, "b": {"n": 10, "em": 0.5, "em_ci": [0.2, 0.8]}},
                "paired_differences": [{"first": "a", "second": "b", "n": 10, "em": -0.2, "em_ci": [-0.5, 0.1], "em_mcnemar_p": 0.5}],
            }
        )
    )
    (tmp_path / "bench_results").mkdir()
    (tmp_path / "bench_results/agent.json").write_text(json.dumps({"reader": "r", "p50_s": 1.23456}))
    page = render(tmp_path)
    assert "From `results/d/10q-seed0-r/metrics.json`" in page and "| a | 10 | 0.300 [0.100, 0.600] |" in page
    assert "| a | b | 10 | -0.200 [-0.500, 0.100] |  | 0.5 |" in page
    assert "`bench_results/agent.json`: reader r, p50_s 1.235" in page


def _run(root, dataset, run_id, questions, methods, pairs=()):
    path = root / "results" / dataset / run_id
    path.mkdir(parents=True)
    scored = {m: {"n": questions, "em": em, "em_ci": [em - 0.1, em + 0.1]} for m, em in methods.items()}
    metrics = {"dataset": dataset, "run_id": run_id, "questions": questions, "llm_model": "r", "methods": scored}
    (path / "metrics.json").write_text(json.dumps(metrics | {"paired_differences": list(pairs)}))


def test_the_headline_is_each_datasets_largest_run_with_what_enrichment_adds(tmp_path):
    _run(tmp_path, "d", "small", 10, {"enrichrag_no_enrich": 0.9, "enrichrag": 0.9})
    reversed_pair = {"first": "enrichrag_no_enrich", "second": "enrichrag", "n": 20, "em": -0.05, "em_ci": [-0.1, 0.0]}
    _run(tmp_path, "d", "large", 20, {"naive_rag": 0.2, "enrichrag_no_enrich": 0.3, "enrichrag": 0.35}, [reversed_pair])
    _run(tmp_path, "e", "no-intervals", 50, {})
    stored_forward = {"first": "enrichrag", "second": "enrichrag_no_enrich", "n": 5, "em": 0.2, "em_ci": [0.0, 0.4]}
    _run(tmp_path, "f", "forward", 5, {"enrichrag_no_enrich": 0.4, "enrichrag": 0.6}, [stored_forward])
    page = render(tmp_path)
    headline = page.split("## Evaluation runs")[0]
    scores = "|  | 0.200 [0.100, 0.300] |  | 0.300 [0.200, 0.400] | 0.350 [0.250, 0.450] |  | 0.050 [0.000, 0.100] |"
    assert f"| d | `results/d/large/metrics.json` | 20 | r {scores}" in headline
    assert headline.rstrip().endswith("| 0.200 [0.000, 0.400] |")  # f: the stored order, as it was
    assert "small" not in headline and "| e |" not in headline  # smaller, and a run without intervals, are not headlines


def test_a_run_outside_the_committed_files_changes_nothing(tmp_path):
    """A user's own run (`run_evaluation.py --limit 3`) lands in results/ but not in git: the page the
    check compares against is made from the committed files only."""
    _run(tmp_path, "d", "committed", 20, {"enrichrag_no_enrich": 0.3, "enrichrag": 0.35})
    committed = frozenset({"results/d/committed/metrics.json"})
    before = render(tmp_path, committed)
    _run(tmp_path, "d", "allq-seed0-mine", 300, {"enrichrag_no_enrich": 0.1, "enrichrag": 0.1})
    assert render(tmp_path, committed) == before
    assert "allq-seed0-mine" in render(tmp_path)  # all files on disk: the run is there
