from enrich_rag.eval.metrics import contains_answer, exact_match, normalize_answer, token_f1


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
