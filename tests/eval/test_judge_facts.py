"""Fact precision by a calibrated judge: the calibration sets and the correction (no model needed)."""

import json
import math

import pytest

from benchmarks.judge_facts import calibration_facts, corrected, precision_interval, youden_threshold
from enrich_rag.text import content_words
from tests.conftest import PROJECT_ROOT


def _rows(n: int) -> list[dict]:
    lines = (PROJECT_ROOT / "data/benchmarks/2wikimultihopqa/dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:n]]


def test_gold_triples_come_with_the_sentence_that_states_them_and_each_corruption_is_false():
    true, false = calibration_facts(_rows(30), limit=20, seed=0)
    assert len(true) == len(false) == 20
    for t, f in zip(true, false):
        assert t["subject"].casefold() in t["evidence"].casefold() or t["object"].casefold() in t["evidence"].casefold()
        changed = [k for k in ("subject", "relation", "object") if t[k] != f[k]]
        assert len(changed) == 1 and f["evidence"] == t["evidence"]
        if changed == ["object"]:
            assert f["object"].casefold() != t["object"].casefold()
        else:
            assert changed == ["relation"] and not set(content_words(f["relation"])) & set(content_words(t["relation"]))
    assert {"object", "relation"} == {next(k for k in ("relation", "object") if t[k] != f[k]) for t, f in zip(true, false)}


def test_the_judges_yes_rate_is_corrected_by_its_rates_on_true_and_false_facts():
    assert corrected(0.8, tpr=0.9, fpr=0.2) == pytest.approx(0.6 / 0.7)
    assert corrected(0.1, tpr=0.9, fpr=0.2) == 0.0 and corrected(0.95, tpr=0.9, fpr=0.2) == 1.0  # clipped
    assert math.isnan(corrected(0.5, tpr=0.4, fpr=0.4))  # a judge that cannot tell true from false says nothing
    low, high = precision_interval([True] * 40 + [False] * 10, [True] * 36 + [False] * 4, [True] * 8 + [False] * 32, seed=0)
    assert low < corrected(0.8, 0.9, 0.2) < high and high - low < 0.5


def test_the_cut_is_the_one_that_best_separates_true_from_false_calibration_facts():
    assert youden_threshold([0.95, 0.9, 0.85, 0.6], [0.88, 0.5, 0.3, 0.2]) == 0.6  # TPR 4/4, FPR 1/4
    assert youden_threshold([0.9, 0.8], [0.85, 0.1]) == 0.9  # 1/2 - 0 ties 2/2 - 1/2: the stricter cut
