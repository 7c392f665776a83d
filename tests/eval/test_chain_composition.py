"""The chain-composition study reads only a run's chains and asks the whole question once over the hops'
answers (as cited fact lines) and their passages. The reader is scripted: the study's bookkeeping is
under test, not a model."""

import json

from benchmarks.chain_composition import chains, composed
from enrich_rag.storage.passages import Passage
from tests.scripted_llm import ScriptedLLM

CHAIN = [
    {"hop": 1, "question": "Who directed X?", "answer": "Ann", "perplexity": 1.1, "grounded": True, "chunk_ids": ["d1::c0"]},
    {"hop": 2, "question": "Where did Ann die?", "answer": "Paris", "perplexity": None, "grounded": False, "chunk_ids": ["d2::c0"]},
]


def _row(id_, kind, chain=()):
    return {
        "id": id_,
        "method": "m",
        "question": "Where did the director of X die?",
        "trace": {"plan": {"kind": kind}, "chain": list(chain)},
    }


def test_only_chains_are_composed_and_the_final_read_sees_every_hops_answer_and_passage(tmp_path):
    rows = [_row("a", "chain", CHAIN), _row("b", "single"), _row("c", "parallel", CHAIN), None]
    rows[3] = dict(rows[0], method="other")
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    found = chains(tmp_path, "m")
    assert [r["id"] for r in found] == ["a"]
    texts = {
        "d1::c0": Passage("d1::c0", "d1", "X", "X was directed by Ann."),
        "d2::c0": Passage("d2::c0", "d2", "Ann", "Ann died in Paris."),
    }
    llm = ScriptedLLM([("Paris", 1.2)])
    composed(llm, found[0], texts, 16)
    (prompt,) = llm.prompts  # one read for the whole chain
    assert "Question: Where did the director of X die?" in prompt
    facts = [prompt.index("Who directed X? | is answered by | Ann"), prompt.index("Where did Ann die? | is answered by | Paris")]
    passages = [prompt.index("X was directed by Ann."), prompt.index("Ann died in Paris.")]
    assert facts == sorted(facts) and max(facts) < min(passages)  # the hops' answers in hop order, then their passages
