"""AUROC of perplexity for a right answer, and what each keep rule would have answered."""

import math

from benchmarks.perplexity_signal import auroc, iteration_rules, keep_rules, signal


def test_auroc_is_one_when_every_right_answer_reads_better_and_a_half_when_perplexity_says_nothing():
    assert auroc([-1.0, -1.2, -3.0, -4.0], [True, True, False, False]) == 1.0
    assert auroc([-2.0, -2.0, -2.0, -2.0], [True, False, True, False]) == 0.5
    assert auroc([-1.0, -2.0], [True, True]) is None  # no wrong answer to compare with


def _row(em, perplexity, reads=None, gold=("London",)):
    trace = {"perplexity": perplexity} | ({"reads": reads} if reads else {})
    return {"method": "enrichrag", "em": em, "gold": list(gold), "trace": trace}


def test_a_retried_read_with_round_0s_answer_and_perplexity_counts_as_a_repeat_with_its_seconds():
    reads = [{"round": 0, "answer": "Asia", "perplexity": 1.96}, {"round": 1, "answer": "Asia", "perplexity": 1.96}]
    row = _row(0.0, 1.96, reads, gold=("Europe",))
    row["trace"]["iteration_seconds"] = [5.0, 4.0]
    rules = keep_rules([row])
    assert rules["retried_reads_repeating_round_0"] == 1 and rules["seconds_a_question_repeating_round_0"] == 4.0


def test_keep_rules_count_what_the_first_and_the_retried_round_would_have_answered():
    rows = [
        # the retried round read the right answer but with a higher perplexity: the loop kept round 0's
        _row(0.0, 1.5, [{"round": 0, "answer": "Paris", "perplexity": 1.5}, {"round": 1, "answer": "London", "perplexity": 2.0}]),
        # both rounds right
        _row(1.0, 1.2, [{"round": 0, "answer": "London", "perplexity": 1.4}, {"round": 1, "answer": "London", "perplexity": 1.2}]),
        # never enriched: not counted
        _row(1.0, 1.1, [{"round": 0, "answer": "London", "perplexity": 1.1}]),
        # round 0 unreadable (a copied example), the retried round wrong
        _row(0.0, 3.0, [{"round": 0, "answer": "Tasmania", "perplexity": None}, {"round": 1, "answer": "Rome", "perplexity": 3.0}]),
    ]
    rules = keep_rules(rows)
    assert rules["questions"] == 3
    assert rules["em_lowest_perplexity"] == round(1 / 3, 4) and rules["em_retried_round"] == round(2 / 3, 4)
    assert rules["em_first_round"] == round(1 / 3, 4) and rules["em_either_right"] == round(2 / 3, 4)
    assert rules["retried_right_first_wrong"] == 1 and rules["first_right_retried_wrong"] == 0
    assert rules["retried_reads"] == 3 and rules["retried_reads_repeating_round_0"] == 0
    out = signal(rows + [_row(0.0, math.inf)])
    assert out["enrichrag"]["questions"] == 5 and out["enrichrag"]["auroc"] is not None


def test_iteration_rules_score_the_first_the_last_the_lowest_and_the_most_given_answer_of_round_0():
    reads = [
        {"round": 0, "answer": "goalkeeper", "perplexity": 1.7},
        {"round": 0, "answer": "Arsenal", "perplexity": 1.2},
        {"round": 0, "answer": "Arsenal", "perplexity": 1.4},
    ]
    rules = iteration_rules(
        [_row(0.0, 1.2, reads, gold=("goalkeeper",)), _row(1.0, 1.1, [{"round": 0, "answer": "London", "perplexity": 1.1}])]
    )
    assert rules["questions"] == 1  # one read only: no choice to make
    assert rules["em_first"] == 1.0 and rules["em_lowest_perplexity"] == rules["em_last"] == rules["em_most_given"] == 0.0
    assert rules["first_minus_lowest"][0] == 1.0


def test_the_loops_rule_is_scored_from_its_reads_not_from_the_answer_a_comparison_step_reworded():
    reads = [{"round": 0, "answer": "the first one", "perplexity": 1.5}, {"round": 1, "answer": "the first one", "perplexity": 1.4}]
    rules = keep_rules([_row(1.0, 1.4, reads, gold=("Berlin",))])  # the final answer was rewritten to "Berlin"
    assert rules["em_lowest_perplexity"] == 0.0
