"""Intervals on scores and on paired differences; McNemar's exact test against scipy's binomial test."""

import json

import numpy as np
import pytest
from scipy.stats import binomtest

from enrich_rag.config import EvalConfig
from enrich_rag.eval.report import aggregate, paired_markdown, pairwise
from enrich_rag.eval.stats import bootstrap, compare, mcnemar_exact, paired_difference


def test_a_bootstrap_interval_holds_the_mean_and_narrows_with_more_questions():
    rng = np.random.default_rng(1)
    small, large = rng.random(50) < 0.4, rng.random(2000) < 0.4
    a, b = bootstrap(small), bootstrap(large)
    assert a.low <= a.value <= a.high and b.low <= b.value <= b.high
    assert (b.high - b.low) < (a.high - a.low) / 3
    assert bootstrap([1, 1, 1]).to_list() == [1.0, 1.0]


def test_pairing_separates_methods_that_fail_together():
    """Two methods right on the same hard questions, one of them also on 8 more: the paired interval
    sees the gain; two independent intervals would overlap."""
    base = np.array([1] * 40 + [0] * 60, dtype=float)
    better = base.copy()
    better[40:48] = 1
    diff = paired_difference(better, base)
    assert diff.value == pytest.approx(0.08) and diff.excludes_zero()
    assert bootstrap(better).low < bootstrap(base).high  # unpaired, the two intervals overlap
    same = paired_difference(base, base)
    assert same.to_list() == [0.0, 0.0] and not same.excludes_zero()
    with pytest.raises(ValueError, match="same questions"):
        paired_difference([1, 0], [1])


@pytest.mark.parametrize("only_a, only_b", [(0, 10), (3, 9), (7, 7), (1, 0), (12, 30)])
def test_mcnemar_exact_is_the_two_sided_binomial_test(only_a, only_b):
    a = [True] * only_a + [False] * only_b + [True] * 5
    b = [False] * only_a + [True] * only_b + [True] * 5
    assert mcnemar_exact(a, b) == pytest.approx(binomtest(only_a, only_a + only_b, 0.5).pvalue)
    assert mcnemar_exact([True, False], [True, False]) == 1.0


def _rows(method, ems):
    return [
        {
            "id": f"q{i}",
            "method": method,
            "em": e,
            "f1": e * 0.5 + 0.25,
            "acc": e,
            "seconds": 1.0,
            "llm_calls": 1,
            "enrich_rounds": 0,
            "partitions": [],
        }
        for i, e in enumerate(ems)
    ]


def test_the_report_gives_every_method_its_interval_and_every_pair_its_difference():
    ev = EvalConfig(questions="q.jsonl", methods=("a", "b", "c"), bootstrap=500)
    rows = _rows("a", [1] * 30 + [0] * 70) + _rows("b", [1] * 45 + [0] * 55) + _rows("c", [1] * 30 + [0] * 70)[:60]
    summary = aggregate(rows, ev)
    assert summary["a"]["em"] == 0.3 and summary["a"]["em_ci"][0] < 0.3 < summary["a"]["em_ci"][1]
    pairs = pairwise(rows, ev)
    assert [(p["first"], p["second"], p["n"]) for p in pairs] == [("a", "b", 100), ("a", "c", 60), ("b", "c", 60)]
    ab = pairs[0]
    assert ab["em"] == -0.15 and ab["em_ci"][1] < 0 and ab["em_mcnemar_p"] < 0.001  # b wins 15 questions, loses none
    assert pairs[1]["em"] == 0 and pairs[1]["em_mcnemar_p"] == 1.0  # the same answers on the shared 60
    table = paired_markdown(pairs)
    assert "| a | b | 100 | -0.150 [" in table and json.dumps(pairs)  # JSON-ready for metrics.json


def test_compare_uses_only_the_questions_both_answered():
    out = compare(_rows("x", [1, 0, 1, 1]), _rows("y", [0, 0, 1])[:3], ("em",))
    assert out["n"] == 3 and out["em"] == pytest.approx(1 / 3, abs=1e-4)


def test_the_unsure_flag_is_scored_against_exact_match_and_iterations_are_counted():
    from enrich_rag.eval.report import iterations, unsure_flag

    rows = [
        {"em": em, "trace": {"sure": sure, "iterations": n, "iteration_seconds": [1.0, 0.4, 0.3][:n]}}
        for em, sure, n in [(1, True, 1), (0, False, 3), (0, False, 2), (1, False, 3), (0, True, 1)]
    ]
    flag = unsure_flag(rows)
    assert flag["unsure_share"] == 0.6
    assert flag["unsure_precision"] == round(2 / 3, 4)  # two of the three flagged answers are wrong
    assert flag["unsure_recall"] == round(2 / 3, 4)  # two of the three wrong answers are flagged
    counted = iterations(rows)
    assert counted["iterations"] == 2.0 and counted["iterations_1"] == 0.4 and counted["iterations_3"] == 0.4
    assert counted["iteration_1_p50_s"] == 1.0 and counted["iteration_3_p50_s"] == 0.3
    assert unsure_flag([{"em": 1, "trace": {}}]) == {} and iterations([{"em": 1}]) == {}
