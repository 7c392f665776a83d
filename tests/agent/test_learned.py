"""Learned facts (evidence/learned_facts.py) over the real small graph: a grounded answer's hops are written as
facts in a `learned-` partition (DuckDB, txtai, DVC real), a later question asking the same is answered
from them without a reader call, a similar one reads the cited passage first, and a fact can be
forgotten and brought back. The reader is scripted (tests/scripted_llm.py): these are the loop's
branches, which a real model cannot be made to hit on demand."""

from __future__ import annotations

import pytest

from enrich_rag.agent.memory import similar_facts
from enrich_rag.errors import StorageError
from enrich_rag.evidence.learned_facts import LEARNED, learned_record, learned_rows, recall
from enrich_rag.storage.partitions import committed_partitions
from enrich_rag.storage.passages import Passage
from tests.agent.conftest import CHAIN, QUESTION, loop_agent, step_outputs
from tests.scripted_llm import ScriptedLLM

CHAIN_READS = [(CHAIN, 2.0), ("Christopher Nolan", 1.1), ("London", 1.1)]


def _learned(resources):
    return {r["question"]: r for r in (learned_record(row) for row in learned_rows(resources.store))}


def _reader(resources, script):
    """A fresh scripted reader for the next question, so its calls are counted from zero."""
    resources._loaded["llm"] = ScriptedLLM(script)
    return resources._loaded["llm"]


def test_a_grounded_chain_is_learned_in_one_partition_and_asked_again_costs_no_reader_call(world, tmp_path, spacy_extractor):
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, CHAIN_READS, hops=True, learn=True)
    first = agent.answer(QUESTION)
    assert first.answer == "London" and first.sure
    (learn,) = step_outputs(first, "Learn")
    learned_partitions = [p for p in committed_partitions(resources.config.paths.graph) if p.startswith(f"{LEARNED}-")]
    assert learn["partition"] == learned_partitions[0] and len(learned_partitions) == 1  # the answer's facts, one partition
    facts = _learned(resources)
    assert set(facts) == {"Who directed Inception?", "Where was Christopher Nolan born?", QUESTION}
    directed = facts["Who directed Inception?"]
    assert directed["answer"] == "Christopher Nolan" and directed["chunk_id"] == "inception::c0"
    assert facts[QUESTION]["answer"] == "London" and facts[QUESTION]["chunk_id"] == "nolan::c0"
    assert facts[QUESTION]["confidence"] == pytest.approx(1 / 1.1, abs=1e-3) and facts[QUESTION]["subject"] == "Inception"

    reader = _reader(resources, [("should not be read", 1.0)])
    again = agent.answer(QUESTION)
    assert reader.prompts == []  # answered from the learned fact: no Plan, no read
    assert again.answer == "London" and again.sure and [c.chunk_id for c in again.citations] == ["nolan::c0"]
    assert step_outputs(again, "Recall")[0]["use"] == "answered" and step_outputs(again, "Learn") == []
    assert len(committed_partitions(resources.config.paths.graph)) == len(learned_partitions) + 1  # nothing new written


def test_a_later_question_sharing_a_hop_skips_that_hops_reader_call(world, tmp_path, spacy_extractor):
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, CHAIN_READS, hops=True, learn=True)
    agent.answer(QUESTION)
    reader = _reader(resources, [('{"hops": ["Who directed Inception?", "When was #1 born?"]}', 2.0), ("1970", 1.1)])
    later = agent.answer("When was the director of Inception born?", enrich="never")
    assert len(reader.prompts) == 2  # the plan and hop 2; hop 1 came from what the first question learned
    first, second = later.chain
    assert first["answer"] == "Christopher Nolan" and first["learned"] == _learned(resources)["Who directed Inception?"]["id"]
    assert second["question"] == "When was Christopher Nolan born?" and later.answer == "1970" and "learned" not in second


def test_a_similar_sub_question_reads_the_learned_passage_first(world, tmp_path, spacy_extractor):
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, CHAIN_READS, hops=True, learn=True)
    agent.answer(QUESTION)
    plan = '{"hops": ["Who directed the film Inception?", "Where did #1 study?"]}'
    reader = _reader(resources, [(plan, 2.0), ("Christopher Nolan", 1.1), ("University College London", 1.1)])
    later = agent.answer("Where did the director of the film Inception study?", enrich="never")
    recalled = step_outputs(later, "Recall")[0]
    assert recalled["use"] == "read" and recalled["question"] == "Who directed Inception?" and 0.6 <= recalled["match"] < 1.0
    assert "Who directed the film Inception?" in reader.prompts[1] and "Christopher Nolan directed Inception" in reader.prompts[1]
    assert later.chain[0]["chunk_ids"] == ["inception::c0"] and later.chain[0]["learned"]
    assert step_outputs(later, "GraphRank") and len(step_outputs(later, "GraphRank")) == 1  # only hop 2 searched


def test_an_unsure_record_is_read_again_and_a_read_only_answer_learns_nothing(world, tmp_path, spacy_extractor):
    script = [(CHAIN, 2.0), ("Christopher Nolan", 1.6), ("London", 1.6)]  # over the threshold (1.5)
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, script, hops=True, learn=True, max_enrich_rounds=0)
    assert step_outputs(agent.answer(QUESTION, enrich="never"), "Learn") == [] and _learned(resources) == {}
    _reader(resources, script)
    agent.answer(QUESTION)
    assert _learned(resources)[QUESTION]["confidence"] == pytest.approx(1 / 1.6, abs=1e-3)
    reader = _reader(resources, [("London", 1.6)])
    again = agent.answer(QUESTION)
    assert step_outputs(again, "Recall")[0]["use"] == "read" and len(reader.prompts) == 1  # the cited passage, read once
    assert again.answer == "London" and [c.chunk_id for c in again.citations] == ["nolan::c0"]


def test_in_the_background_the_facts_are_a_job_and_the_answer_does_not_wait(world, tmp_path, spacy_extractor):
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, CHAIN_READS, hops=True, learn=True, enrich_when="background")
    answer = agent.answer(QUESTION)
    (learn,) = step_outputs(answer, "Learn")
    (job,) = resources.jobs.jobs()
    assert learn["job"] == job.id and job.kind == "learn" and len(job.learned) == 3 and answer.queued == []
    assert _learned(resources) == {}  # nothing written before the job runs
    (done,) = resources.jobs.run_pending(agent.jobs.run)
    assert done.state == "done" and done.result["facts"] == 3 and done.result["partition"].startswith(f"{LEARNED}-")
    reader = _reader(resources, [("should not be read", 1.0)])
    assert agent.answer(QUESTION).answer == "London" and reader.prompts == []


def test_a_forgotten_fact_is_not_recalled_and_its_rollback_brings_it_back(world, tmp_path, spacy_extractor):
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, CHAIN_READS, hops=True, learn=True)
    agent.answer(QUESTION)
    whole = _learned(resources)[QUESTION]
    writer, store = resources.writer, resources.store
    with pytest.raises(StorageError, match="no fact 'e-nope' in the graph"):
        writer.forget(["e-nope"])
    forgotten = writer.forget([whole["id"]])
    assert forgotten.partition.startswith("forget-") and QUESTION not in _learned(resources)
    assert recall(store, QUESTION, ["Inception"], 0.6) is None
    assert writer.verify() == []
    compacted = writer.compact()
    assert compacted and QUESTION not in _learned(resources)  # merged: the forget still hides it
    assert len(_learned(resources)) == 2 and writer.verify() == []
    writer.rollback(compacted["partition"])
    writer.rollback(forgotten.partition)
    assert _learned(resources)[QUESTION]["id"] == whole["id"]
    assert recall(store, QUESTION, ["Inception"], 0.6).exact


def test_a_question_naming_no_entity_or_a_fragment_learns_nothing():
    """No parser finds an entity in "Who directed the film about a thief?": no fact is learned about a
    piece of the question's text, nor about a fragment a parser cut at a bracket or a slash."""
    from enrich_rag.evidence.learned_facts import is_name, learned_fact

    passage = Passage("inception::c0", "inception", "Inception", "Christopher Nolan directed Inception, a film about a thief.")
    assert learned_fact("Who directed the film about a thief?", "Christopher Nolan", 1.02, [passage], [], "qwen") is None
    assert learned_fact("Who directed the film about a thief?", "Christopher Nolan", 1.02, [passage], ["thief]"], "qwen") is None
    assert learned_fact("Who directed Inception?", "Steven Spielberg", 1.02, [passage], ["Inception"], "qwen") is None  # no line states it
    assert [is_name(n) for n in ("Errno 24] Too", "SSH/", "10", "npm ci", "C++", "St. Louis")] == [False, False, False, True, True, True]


def test_a_question_asked_again_in_other_words_finds_its_learned_fact(world, tmp_path, spacy_extractor):
    """The same question asked in other case and punctuation is the same question, found by DuckDB; a
    rewording that asks the same is found through the graph index."""
    from enrich_rag.evidence.learned_facts import learned_fact

    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("unused", 1.0)], learn=True)
    (passage,) = resources.passages.by_ids(["inception::c0"])
    asked = "Who directed the film about a thief who steals corporate secrets?"
    fact = learned_fact(asked, "Christopher Nolan", 1.02, [passage], ["corporate secrets"], "qwen")
    assert fact is not None and fact.subject == "corporate secrets" and fact.evidence == "Christopher Nolan directed Inception."
    assert agent.jobs.learn([fact])["facts"] == 1
    store = resources.store
    same = recall(store, "who directed the film about a THIEF who steals corporate secrets", [], 0.6)
    assert same is not None and same.exact and same.fact.object == "Christopher Nolan"
    reworded = "Who directed the film about a thief stealing corporate secrets?"
    assert recall(store, reworded, [], 0.6) is None  # no entity, not the same words: DuckDB alone cannot find it
    near = recall(store, reworded, [], 0.5, similar=lambda q: similar_facts(resources, q))
    assert near is not None and not near.exact and near.fact.id == same.fact.id
    asks_where = "Where was the film about a thief who steals corporate secrets made?"
    assert recall(store, asks_where, [], 0.0, similar=lambda q: similar_facts(resources, q)) is None  # asks something else
