"""The results page is generated from committed files, and the committed page is what they give."""

import json
import subprocess
import sys

from benchmarks.results_page import render
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


def _run(root, dataset, run_id, questions, methods, pairs=(), folder=""):
    """`folder`: a study's folder under results/ (default: the dataset's own)."""
    path = root / "results" / (folder or dataset) / run_id
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


def test_a_superseded_run_still_in_the_tree_is_left_off_the_page_and_counted_and_studies_stay(tmp_path):
    _run(tmp_path, "hotpotqa", "small", 10, {"enrichrag_no_enrich": 0.3})
    _run(tmp_path, "hotpotqa", "large", 20, {"enrichrag_no_enrich": 0.3})
    _run(tmp_path, "hotpotqa", "study", 5, {"enrichrag_no_enrich": 0.4}, folder="hops/hotpotqa")
    page = render(tmp_path)
    assert "run large" in page and "run study" in page and "run small" not in page
    assert "(1 still here)" in page


def test_what_to_expect_shows_the_default_beside_its_one_read_and_gold_read_from_the_board(tmp_path):
    from benchmarks import expectations

    read = lambda em, **more: {"em": em, "prompt_tokens_mean": 250.4, "seconds_p50": 5.96, "seconds_max": 21.4, **more}  # noqa: E731
    board = {
        "commit": "abc1234",
        "sets": {
            "musique": {
                "commit": "abc1234",
                "questions": 100,
                "default": read([0.1, 0.04, 0.16]),
                "top3": read([0.12, 0.06, 0.18]),
                "gold": read([0.31, 0.22, 0.4]),
                "paired": {
                    "default - top3": {"em_difference": [-0.02, -0.07, 0.03]},
                    "default - gold": {"em_difference": [-0.21, -0.3, -0.13]},
                },
            },
            "npm": {"commit": "abc1234", "questions": 20, "default": read([0.65, 0.45, 0.85]), "paired": {}},  # an arm alone
        },
    }
    (tmp_path / "bench_results").mkdir()
    (tmp_path / expectations.BOARD).write_text(json.dumps(board))
    bench = {
        "commit": "abc1234",
        "cores": 2,
        "documents": 100,
        "build": {"seconds": 95.2, "peak_rss_mb": 1400},
        "server_warm_s": 21.0,
        "server_peak_rss_mb": 2500,
        "without_enrichment": {"questions": 10, "first_step_p50_s": 0.04, "total_p50_s": 6.2, "total_p95_s": 11.0},
        "enrichment_allowed": {"questions": 5, "total_p50_s": 24.0, "enriched_share": 0.8},
    }
    (tmp_path / "bench_results/what_to_expect.json").write_text(json.dumps(bench))
    block = expectations.what_to_expect(tmp_path, None)
    text = "\n".join(block)
    assert "| build 100 documents (`enrich-rag build`) | 95 s, peak 1.4 GB |" in text
    assert "| 0.0 s / 6.2 s (p95 11.0 s) |" in text and "24.0 s; 80% of them enriched" in text
    row = next(line for line in block if line.startswith("| MuSiQue"))
    assert (
        row == "| MuSiQue | 100 | 0.100 [0.040, 0.160] | 0.120 | 0.310 | -0.020 [-0.07, +0.03] | -0.210 [-0.30, -0.13] | 250 | 6.0 / 21.4 |"
    )
    assert "| npm" not in text  # a set with the default alone has no reads to stand beside
    uncommitted = expectations.what_to_expect(tmp_path, frozenset({expectations.BENCH}))  # the board not committed
    assert uncommitted and not any(line.startswith("| MuSiQue") for line in uncommitted)
    readme = "intro\n<!-- what-to-expect: start -->\nstale\n<!-- what-to-expect: end -->\nrest\n"
    assert (
        expectations.readme_with(readme, ["fresh"]) == "intro\n<!-- what-to-expect: start -->\nfresh\n<!-- what-to-expect: end -->\nrest\n"
    )
