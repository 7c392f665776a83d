from enrich_rag.eval.metrics import all_evidence_at_k, contains_answer, exact_match, normalize_answer, recall_at_k, token_f1


def test_squad_normalisation():
    assert normalize_answer("The  Big-12 Conference!") == "big12 conference"
    assert normalize_answer("an Apple a day") == "apple day"


def test_exact_match_and_f1_on_known_pairs():
    assert exact_match("the Big 12", ["Big 12"]) == 1.0
    assert exact_match("Big 12 Conference", ["Big 12"]) == 0.0
    assert token_f1("Big 12 Conference", ["Big 12"]) == 0.8  # p = 2/3, r = 1
    assert token_f1("James Douglas Packer", ["James Packer", "Packer"]) == 0.8
    assert token_f1("London", ["Paris"]) == 0.0 and token_f1("", ["x"]) == 0.0


def test_contains_answer():
    assert contains_answer("He was born in London, England", ["London"]) == 1.0
    assert contains_answer("Paris", ["London"]) == 0.0


def test_all_evidence_needs_every_gold_passage_in_the_first_k():
    retrieved = ["a", "x", "b", "y"]
    assert recall_at_k(retrieved, {"a", "b"}, 2) == 0.5 and all_evidence_at_k(retrieved, {"a", "b"}, 2) == 0.0
    assert all_evidence_at_k(retrieved, {"a", "b"}, 3) == 1.0
    assert all_evidence_at_k(retrieved, set(), 3) == 0.0  # no gold: nothing to judge, never a free point
