"""The wrong-answer model's features and fit (no model, no index: plain data)."""

import math

import numpy as np
import pytest

from benchmarks.fit_confidence import calibration, fit_wrong_answer_model
from enrich_rag.agent.confidence import FEATURES, WrongAnswerModel, answer_features

QUESTION = "Where was the director of Inception born?"
NOLAN = "Christopher Nolan: Nolan was born in London in 1970."


def test_an_answer_read_in_its_passage_is_grounded_and_one_it_did_not_read_is_not():
    trace = {"perplexity": 1.2, "reads": [{"answer": "London"}, {"answer": "Paris"}], "selection": {"coverage": 0.5}}
    read = answer_features(QUESTION, "London", trace, [NOLAN])
    assert read["ungrounded"] == 0.0 and read["disagreement"] == 0.5 and read["uncovered"] == 0.5
    assert read["log_perplexity"] == pytest.approx(math.log(1.2)) and read["chain"] == 0.0
    assert answer_features(QUESTION, "Paris", trace, [NOLAN])["ungrounded"] == 1.0
    assert answer_features(QUESTION, "Inception", trace, [NOLAN])["answer_in_question"] == 1.0


def test_a_chain_is_grounded_only_when_every_hop_is_and_a_reused_read_is_not_counted_twice():
    hops = [{"grounded": True}, {"grounded": False}]
    reads = [{"answer": "Christopher Nolan"}, {"answer": "Christopher Nolan", "reused": True}, {"answer": "London"}]
    features = answer_features(QUESTION, "London", {"perplexity": math.inf, "reads": reads, "chain": hops}, [NOLAN])
    assert features["ungrounded"] == 1.0 and features["chain"] == 1.0
    assert features["disagreement"] == 0.5  # two reads, not three
    assert features["log_perplexity"] == 5.0  # an unreadable answer: as unsure as it gets
    assert set(features) == set(FEATURES)


def test_the_fitted_model_ranks_wrong_answers_above_right_ones_and_survives_a_round_trip():
    rng = np.random.default_rng(0)
    rows, wrong = [], []
    for _ in range(200):
        bad = bool(rng.random() < 0.5)
        base = dict.fromkeys(FEATURES, 0.0)
        base["log_perplexity"] = float(rng.normal(1.0 if bad else 0.2, 0.3))
        base["ungrounded"] = float(rng.random() < (0.7 if bad else 0.2))
        rows.append(base)
        wrong.append(bad)
    model = fit_wrong_answer_model(rows, wrong)
    p = model.probabilities(rows)
    assert p[np.array(wrong)].mean() > 0.7 > 0.3 > p[~np.array(wrong)].mean()
    assert model.weights[FEATURES.index("log_perplexity")] > 0 and model.weights[FEATURES.index("ungrounded")] > 0
    again = WrongAnswerModel.from_dict(model.to_dict())
    assert again.probability(rows[0]) == pytest.approx(model.probability(rows[0]))
    stale = model.to_dict() | {"features": ["log_perplexity"]}
    with pytest.raises(ValueError, match="refit it"):
        WrongAnswerModel.from_dict(stale)


def test_calibration_error_is_zero_when_predictions_match_what_happened_and_large_when_not():
    p = np.array([0.25] * 4 + [0.75] * 4)
    assert calibration(p, [True, False, False, False, True, True, True, False])["ece"] == 0.0
    assert calibration(np.array([0.95] * 4), [False] * 4)["ece"] == pytest.approx(0.95)
