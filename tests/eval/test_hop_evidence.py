"""The hop evidence study's bookkeeping on hops made here: which hops line up with the gold chain, where
the gold paragraph stands, and the rates per ranker."""

from benchmarks.hop_evidence import aligned_hops, position, summary
from enrich_rag.eval.datasets import QAItem
from enrich_rag.storage.passages import Passage

GOLD = QAItem(
    "q", "Where did the director of X die?", ("Paris",), hops=(("Who directed X?", "Ann", "d1"), ("Where did #1 die?", "Paris", "d2"))
)


def _passage(doc: str, chunk: int = 0) -> Passage:
    return Passage(f"{doc}::c{chunk}", doc, doc, "text")


def test_the_gold_paragraph_is_found_by_its_document_in_any_chunk():
    ranked = [_passage("d9"), _passage("d2", 3), _passage("d2")]
    assert position(ranked, "d2") == 1
    assert position(ranked, "d1") is None


def test_only_the_hops_of_a_chain_with_the_gold_number_of_hops_are_lined_up():
    gold = {"a": GOLD, "b": GOLD}
    chain = [{"hop": 1, "question": "Who directed X?", "answer": "Ann"}, {"hop": 2, "question": "Where did Ann die?", "answer": "Rome"}]
    rows = [
        {"id": "a", "method": "m", "trace": {"chain": chain}},
        {"id": "b", "method": "m", "trace": {"chain": chain[:1]}},  # one hop against two: a wrong plan
        {"id": "a", "method": "other", "trace": {"chain": chain}},
    ]
    hops = aligned_hops(rows, gold, "m")
    assert [(h["id"], h["hop"]) for h in hops] == [("a", 1), ("a", 2)]
    assert hops[1]["earlier"] == ["Ann"] and hops[1]["gold_doc"] == "d2" and hops[1]["run_answer"] == "Rome"


def test_the_rates_say_how_often_each_ranker_puts_the_gold_paragraph_first():
    measured = [
        {"hop": 1, "hybrid_search": 0, "pagerank": 2, "reading_order": None, "gold_read_em": 1.0, "run_hop_em": 1.0},
        {"hop": 2, "hybrid_search": 4, "pagerank": 0, "reading_order": 0, "gold_read_em": 0.0, "run_hop_em": 0.0},
    ]
    found = summary(measured)
    assert found["hops"] == 2 and "llm_p_yes_top5" not in found
    assert found["hybrid_search"]["first"][0] == 0.5 and found["hybrid_search"]["top3"][0] == 0.5
    assert found["first_minus_hybrid_search"]["pagerank"][0] == 0.0 and found["first_minus_hybrid_search"]["reading_order"][0] == 0.0
    assert found["pagerank"]["top3"][0] == 1.0 and found["reading_order"]["absent"][0] == 0.5
    assert found["reader_on_gold_paragraph"][0] == 0.5 and found["hop_em_in_run"][0] == 0.5
    assert found["hop_em_in_run_gold_read_first"][0] == 0.0 and found["hop_em_in_run_gold_not_first"][0] == 1.0
    assert found["first_hops"]["hops"] == 1 and found["first_hops"]["reading_order"]["absent"][0] == 1.0
    assert found["later_hops"]["reader_on_gold_paragraph"][0] == 0.0
