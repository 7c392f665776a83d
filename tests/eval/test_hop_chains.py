"""The chain study's bookkeeping on a run of three questions made here: where each wrong chain broke first."""

from benchmarks.hop_chains import analyse, first_break
from enrich_rag.eval.datasets import QAItem

GOLD = QAItem(
    "q", "Where did the director of X die?", ("Paris",), hops=(("Who directed X?", "Ann", "d1"), ("Where did #1 die?", "Paris", "d2"))
)


def _hop(answer, chunk, grounded=True):
    return {"answer": answer, "chunk_ids": [f"{chunk}::c0"], "grounded": grounded}


def test_a_wrong_chain_is_put_down_to_the_first_place_it_broke():
    assert first_break([_hop("Ann", "d1")], GOLD) == "plan"
    assert first_break([_hop("Ann", "d1"), _hop("Rome", "d9")], GOLD) == "evidence"
    assert first_break([_hop("Bo", "d1"), _hop("Rome", "d2")], GOLD) == "misread"
    assert first_break([_hop("Ann", "d1"), _hop("Paris", "d2")], GOLD) == "composition"


def test_the_study_counts_plans_hops_grounding_and_breaks():
    gold = {i: GOLD.__class__(i, GOLD.question, GOLD.answers, hops=GOLD.hops) for i in ("a", "b", "c")}
    rows = [
        {"id": "a", "method": "m", "em": 1.0, "trace": {"chain": [_hop("Ann", "d1"), _hop("Paris", "d2")]}},
        {"id": "b", "method": "m", "em": 0.0, "trace": {"chain": [_hop("Ann", "d1"), _hop("Rome", "d9", False)]}},
        {"id": "c", "method": "m", "em": 0.0, "trace": {"chain": []}},  # read as one question: no plan
        {"id": "a", "method": "oracle_hops", "em": 1.0, "trace": {}},
    ]
    found = analyse(rows, gold, "m")
    assert found["questions"] == 3 and found["planned_as_chain"] == 2
    assert found["gold_hop_count"][0] == round(2 / 3, 4) and found["hop_em"][0] == 3 / 4
    assert found["all_grounded"][0] == 0.5 and found["em_grounded_chains"][0] == 1.0 and found["em_ungrounded_chains"][0] == 0.0
    assert found["first_break"] == {"plan": 1, "evidence": 1, "misread": 0, "composition": 0}
    assert found["oracle_hops_em_on_same"][0] == 1.0
