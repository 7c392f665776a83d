"""Every branch of the agent loop, with a scripted LLM over a real small graph (DuckDB, txtai, DVC).

The LLM is scripted (see tests/scripted_llm.py); everything else is real. Fast: one build per
module, and each test that writes works on its own copy.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from enrich_rag.agent import whole_read
from enrich_rag.agent.stream import Hooks
from enrich_rag.agent.sufficiency import (
    ANSWER,
    ANSWER_UNSURE,
    CONVERGED,
    GROUNDED,
    UNDER_THRESHOLD,
    Sufficiency,
    analyze_decide,
    check_sufficiency,
    converged,
)
from enrich_rag.agent.trace import Ranked
from enrich_rag.evidence.citations import PassageCitation
from enrich_rag.evidence.lines import evidence_text
from enrich_rag.evidence.query_analysis import QueryError
from enrich_rag.resources import Resources
from enrich_rag.storage.partitions import committed_partitions
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge
from enrich_rag.storage.workspace import writable_copy
from tests.agent.conftest import CHAIN, QUESTION, loop_agent, step_outputs
from tests.conftest import make_agent
from tests.scripted_llm import ScriptedLLM


def _surface_one(monkeypatch):
    """Arrange that the enrichment surfaced a passage (the last one of the retry's PageRank list that the
    round before did not read), so the retried round reads a new context. In this five-page world the new
    facts move no passage by themselves, and a context read before is not read again (the same prompt
    gives the same answer), so a scripted reader could not answer the retry differently."""

    def surfaced(before, ranking):
        if before.sufficiency is None or ranking is None:
            return []
        read = {e.id for e in before.evidence}
        return [p for p in ranking.passages if p.id not in read][-1:]

    monkeypatch.setattr(whole_read, "_surfaced", surfaced)


def test_under_threshold_answers_at_once(world, tmp_path, spacy_extractor):
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, [("London", 1.2)])
    answer = agent.answer(QUESTION)
    assert answer.trace.step_names() == ["AnalyzeQuery", "GraphRank", "EnrichContext", "CheckSufficiency", "AnalyzeDecide"]
    assert step_outputs(answer, "CheckSufficiency")[0]["reason"] == UNDER_THRESHOLD
    assert step_outputs(answer, "AnalyzeDecide")[0]["decision"] == ANSWER
    assert answer.sure and answer.answer == "London" and answer.citations


def test_converged_without_enrichment_answers_unsure(world, tmp_path, spacy_extractor):
    # PageRank's passages widen each iteration
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, [("Paris", 10.0), ("Paris", 9.9)], selection="pagerank")
    answer = agent.answer(QUESTION, enrich="never")
    checks = step_outputs(answer, "CheckSufficiency")
    assert len(step_outputs(answer, "EnrichContext")[1]["chunk_ids"]) == 3  # the second read is one passage wider
    assert [c.get("reason") for c in checks] == [None, CONVERGED]  # 10 -> 9.9: a gain of 1%, under min_gain
    decide = step_outputs(answer, "AnalyzeDecide")[0]
    assert decide == {"reason": "enrichment disabled", "decision": ANSWER_UNSURE}
    assert not answer.sure and "EnrichGraph" not in answer.trace.step_names()


def test_entity_first_selects_once_a_round_and_grows_by_pagerank(world, tmp_path, spacy_extractor):
    """Its selection runs once; later iterations keep it first and add PageRank's next passage."""
    script = [("Paris", 20.0), ("Paris", 12.0), ("Paris", 11.9)]
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, script, selection="entity_first", max_iterations=3)
    answer = agent.answer(QUESTION, enrich="never")
    contexts = step_outputs(answer, "EnrichContext")
    assert ["selection" in c for c in contexts] == [True] + [False] * (len(contexts) - 1)
    assert [c["passages"] for c in contexts] == [2, 3, 4][: len(contexts)] and len(contexts) == 3
    assert all(b["chunk_ids"][: len(a["chunk_ids"])] == a["chunk_ids"] for a, b in zip(contexts, contexts[1:]))
    assert step_outputs(answer, "CheckSufficiency")[-1]["reason"] == CONVERGED  # 12 -> 11.9 is under min_gain
    assert answer.answer == "Paris" and not answer.sure


def test_the_lowest_perplexity_answer_of_a_round_wins(world, tmp_path, spacy_extractor):
    script = [("Paris", 8.0), ("London", 3.0), ("Rome", 6.0)]
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, script, selection="pagerank", min_perplexity_gain=0.0)
    answer = agent.answer(QUESTION, enrich="never")
    answers = [o["answer"] for o in step_outputs(answer, "CheckSufficiency")]
    assert answers == ["Paris", "London", "Rome"]  # 2, 3, then 4 passages
    assert answer.answer == "London"
    assert math.isclose(answer.perplexity, {"Paris": 8.0, "London": 3.0, "Rome": 6.0}[answer.answer], rel_tol=1e-6)


def test_enrichment_writes_a_partition_and_the_retry_reads_it(world, tmp_path, spacy_extractor, monkeypatch):
    _surface_one(monkeypatch)
    agent, resources = loop_agent(
        world, tmp_path, spacy_extractor, [("Paris", 20.0), ("London", 1.1)], max_enrich_rounds=1, max_iterations=1
    )
    answer = agent.answer(QUESTION)
    assert answer.trace.step_names() == [
        "AnalyzeQuery",
        "GraphRank",
        "EnrichContext",
        "CheckSufficiency",
        "AnalyzeDecide",
        "EnrichGraph",
        "GraphRank",
        "EnrichContext",
        "CheckSufficiency",
        "AnalyzeDecide",
    ]
    enriched = step_outputs(answer, "EnrichGraph")[0]
    assert enriched["partition"] in committed_partitions(Path(resources.config.paths.graph))
    assert any(c.startswith("nolan::") for c in enriched["new_chunks"]) and enriched["indexed"] > 0
    assert answer.trace.partitions_written == [enriched["partition"]]
    assert answer.answer == "London" and answer.sure  # the retry's answer, not the first round's
    assert resources.writer.verify() == []
    # The gap the graph could see came first: the top passage the seed never read (the Nolan page).
    assert [c for c in enriched["unread_candidates"] if c.startswith("nolan::")]
    assert enriched["new_chunks"][0] == enriched["unread_candidates"][0]
    # The retry walked the new partition: its neighbourhood holds the facts just written, which the first
    # round's did not, and what it read comes from the page the enrichment extracted.
    before, after = answer.trace.records(Ranked)
    assert after.wire["pagerank_graph"][1] > before.wire["pagerank_graph"][1]
    new_facts = {e["id"] for e in resources.store.rows_of([enriched["partition"]])[1]}
    assert new_facts and any(c.startswith("nolan::") for c in step_outputs(answer, "EnrichContext")[-1]["chunk_ids"])


def test_a_retried_round_that_reads_what_was_read_before_does_not_ask_the_reader_again(world, tmp_path, spacy_extractor):
    """Nothing surfaced and the tree unchanged: the retry's context is round 0's, whose answer it reuses."""
    agent, resources = loop_agent(
        world, tmp_path, spacy_extractor, [("Paris", 20.0), ("London", 1.1)], max_enrich_rounds=1, max_iterations=1
    )
    answer = agent.answer(QUESTION)
    first, retried = step_outputs(answer, "CheckSufficiency")
    assert answer.trace.partitions_written and "reused" not in first and retried["reused"]
    assert retried["answer"] == first["answer"] == "Paris" and not answer.sure
    assert sum("Question:" in p and "Facts:" in p for p in resources.llm.prompts) == 1  # one reading, not two


def test_surfaced_passages_are_the_new_top_passages_neither_ranked_nor_read_before():
    from enrich_rag.agent.steps import SearchRound
    from enrich_rag.evidence.graph_rank import GraphRanking

    p = {i: Passage(f"d{i}::c0", f"d{i}", f"Title {i}", f"text {i}") for i in range(9)}
    before = SearchRound(Sufficiency("Paris", 9.0, (p[0], p[7])), ranked=(p[0], p[1], p[2], p[3], p[4], p[5]))
    after = GraphRanking([p[6], p[1], p[7], p[5], p[0], p[8]])  # 6 and 5 rose into the top 5; 7 was read; 8 is sixth
    assert whole_read._surfaced(before, after) == [p[6], p[5]]
    assert whole_read._surfaced(SearchRound(), after) == []  # a first round has nothing before it
    assert whole_read._surfaced(before, None) == []


def test_a_retried_round_reads_what_it_read_before_and_then_what_enrichment_surfaced(world, tmp_path, spacy_extractor, monkeypatch):
    """Which passage surfaces is arranged here (the last passage of the retry's PageRank list, as if the new
    facts had lifted it); the enrichment, the ranking and the prompts are the real loop's."""
    script = [("Paris", 20.0), ("Rome", 12.0), ("London", 1.1)]
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, script, max_enrich_rounds=1, max_iterations=2)
    lifted = []

    def surfaced(before, ranking):
        if before.sufficiency is None or ranking is None:
            return []
        read = {e.id for e in before.evidence}
        lifted[:] = [p for p in ranking.passages if p.id not in read][-1:]
        return lifted

    monkeypatch.setattr(whole_read, "_surfaced", surfaced)
    answer = agent.answer(QUESTION)
    *_, best_before, retried = step_outputs(answer, "EnrichContext")  # the first round's best read 3 passages ("Rome")
    assert "EnrichGraph" in answer.trace.step_names()
    assert lifted and retried["surfaced"] == [lifted[0].id]
    assert retried["chunk_ids"] == [*best_before["chunk_ids"], lifted[0].id]  # the prompt extends what was read
    assert answer.answer == "London" and lifted[0].id in [c.chunk_id for c in answer.citations]


def test_an_enrichment_round_that_reads_worse_keeps_the_earlier_answer(world, tmp_path, spacy_extractor, monkeypatch):
    _surface_one(monkeypatch)
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, [("London", 2.0), ("Paris", 9.0)], max_enrich_rounds=1, max_iterations=1)
    answer = agent.answer(QUESTION)
    assert [o["answer"] for o in step_outputs(answer, "CheckSufficiency")] == ["London", "Paris"]
    assert answer.trace.partitions_written  # the enrichment happened
    assert answer.answer == "London" and math.isclose(answer.perplexity, 2.0) and not answer.sure


def test_last_round_answers_unsure_and_nothing_uncovered_stops(world, tmp_path, spacy_extractor):
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("Paris", 20.0)], max_enrich_rounds=0, max_iterations=1)
    answer = agent.answer(QUESTION)
    assert step_outputs(answer, "AnalyzeDecide")[0] == {"reason": "max_enrich_rounds reached", "decision": ANSWER_UNSURE}
    # Enrich twice by hand: the second finds every chunk of its query already extracted.
    first, second = agent.jobs.enrich("Christopher Nolan", []), agent.jobs.enrich("Christopher Nolan", [])
    assert first.partition and not second.partition and second.record()["reason"] == "no uncovered chunks found"


def test_no_enrichment_round_starts_without_the_time_for_it(world, tmp_path, spacy_extractor):
    """The web server's limit covers the whole question: an enrichment it cannot hold is not started."""
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, [("Paris", 20.0)], max_enrich_rounds=1, max_iterations=1)
    answer = agent.answer(QUESTION, hooks=Hooks(time_for_enrichment=lambda: False))
    assert step_outputs(answer, "AnalyzeDecide")[0] == {
        "reason": "no time left to enrich within the request's limit",
        "decision": ANSWER_UNSURE,
    }
    assert "EnrichGraph" not in answer.trace.step_names() and not answer.sure and answer.answer == "Paris"


def test_check_sufficiency_reads_passages_and_facts_alike():
    llm = ScriptedLLM([("London", 1.5)])
    passage = Passage("nolan::c0", "nolan", "Christopher Nolan", "Nolan was born in London.")
    fact = Edge("Nolan", "born in", "London", "Nolan was born in London in 1970.", "nolan::c0", "nolan")
    result = check_sufficiency(llm, QUESTION, [passage, fact], 8)
    assert result.answer == "London" and math.isclose(result.perplexity, 1.5) and result.evidence == (passage, fact)
    assert "Christopher Nolan: Nolan was born in London." in llm.prompts[0]
    assert "Fact: Nolan | born in | London" in llm.prompts[0]  # a fact is one short line, apart from passages
    assert evidence_text(passage) == passage.content and evidence_text(fact) == fact.evidence


def test_converged_and_decide():
    def hist(*ppl):
        return [Sufficiency("a", p, ()) for p in ppl]

    assert not converged(hist(5.0), 0.05)
    assert converged(hist(5.0, 4.9), 0.05) and not converged(hist(5.0, 4.0), 0.05)
    assert converged(hist(math.inf, math.inf), 0.05) and not converged(hist(math.inf, 3.0), 0.05)
    assert analyze_decide(1.4, 1.5) == ANSWER and analyze_decide(1.5, 1.5) != ANSWER


def test_a_sure_answer_still_enriches_a_gap_the_graph_can_see(world, tmp_path, spacy_extractor, monkeypatch):
    """The seed never read the Christopher Nolan page; with enrich_on_gaps a sure answer whose PageRank
    top passages hold that unread chunk enriches once, and the round's better answer is kept."""
    _surface_one(monkeypatch)
    plain, _ = loop_agent(world, tmp_path / "plain", spacy_extractor, [("London", 1.2)])
    assert "EnrichGraph" not in plain.answer(QUESTION).trace.step_names()
    agent, resources = loop_agent(
        world, tmp_path / "gaps", spacy_extractor, [("Paris", 1.3), ("London", 1.1)], enrich_on_gaps=True, max_enrich_rounds=1
    )
    answer = agent.answer(QUESTION)
    decide = step_outputs(answer, "AnalyzeDecide")
    assert decide[0]["decision"] == "enrich" and "unextracted passages" in decide[0]["reason"]
    assert "EnrichGraph" in answer.trace.step_names() and answer.trace.partitions_written
    assert answer.answer == "London"  # the enriched round reads better
    assert "nolan::c0" in resources.store.covered_chunks(["nolan::c0"])


def test_the_tree_grows_one_passage_an_iteration_and_each_prompt_extends_the_last(world, tmp_path, spacy_extractor):
    """pcst (the default): k passages, then k+1, ...; what was read stays first, so llama.cpp's prompt
    cache reads only the added evidence; the round stops when the gain falls under min_gain."""
    agent, resources = loop_agent(
        world, tmp_path, spacy_extractor, [("Paris", 10.0), ("London", 6.0), ("London", 5.9)], edge_cost=0.05
    )  # cheap links: the five-page world's tree can afford a third page
    assert agent.evidence.selection == "pcst"
    answer = agent.answer(QUESTION, enrich="never")
    contexts = step_outputs(answer, "EnrichContext")
    checks = step_outputs(answer, "CheckSufficiency")
    assert [c["passages"] for c in contexts][:2] == [2, 3]
    assert checks[-1].get("reason") == CONVERGED or len(checks) == agent.config.max_iterations
    prompts = [p.rsplit(">>>", 1)[0] for p in resources.llm.prompts]  # the evidence block, before its close
    assert all(later.startswith(earlier) for earlier, later in zip(prompts, prompts[1:]))
    assert answer.answer == "London" and math.isclose(answer.perplexity, 5.9 if len(checks) == 3 else 6.0, rel_tol=1e-6)
    # The answer cites exactly what the best iteration read, and the drawn passages are those.
    drawn = {n["chunk_id"] for n in answer.subgraph["nodes"] if n["kind"] == "passage"}
    assert drawn == set(answer.subgraph["context"]) == {c.chunk_id for c in answer.citations if c.chunk_id in drawn}


def test_a_round_reads_the_graph_once_and_searches_the_corpus_once(world, tmp_path, spacy_extractor):
    """Every store and index call of a question, by tool: GraphRank reads the neighbourhood in one DuckDB
    query and searches each index once; the tree (EnrichContext) reads nothing from the store, however
    many iterations; entity-first's micro-queries are its only other corpus searches."""
    from benchmarks.store_calls import CallCounter

    agent, resources = loop_agent(
        world, tmp_path, spacy_extractor, [("Paris", 10.0), ("Rome", 8.0), ("Oslo", 6.0)], min_perplexity_gain=0.0, edge_cost=0.05
    )
    agent.answer("Who directed Inception?", enrich="never")  # indexes and models load outside the count
    counter = CallCounter({"corpus index": resources.corpus_index, "graph index": resources.graph_index})
    with counter.installed():
        answer = agent.answer(QUESTION, enrich="never")
    assert len(step_outputs(answer, "CheckSufficiency")) == 3  # three iterations of the tree
    calls = counter.by_tool()
    assert calls["GraphRank"] == {
        "GraphStore.neighbourhood": 1,
        "PassageStore.by_ids": 2,  # the corpus hits, PageRank's passages
        "corpus index search": 1,
        "graph index search": 1,
    }
    micro_queries = sum(len(r["micro_queries"]) for r in step_outputs(answer, "EnrichContext")[0]["selection"]["rounds"])
    assert calls["EnrichContext"] == {"PassageStore.by_ids": micro_queries, "corpus index search": micro_queries}
    assert set(calls) == {"AnalyzeQuery", "GraphRank", "EnrichContext"}  # CheckSufficiency and AnalyzeDecide read no store
    assert calls["AnalyzeQuery"] == {"GraphStore.nodes_by_ids": 1}  # the question's n-grams that name a graph entity


def test_deep_enrichment_reads_chunks_the_seed_read_and_writes_llm_facts(world, tmp_path, spacy_extractor):
    """extraction.deep: llm. A chunk spaCy read at build time is still unread for the deep extractor, so
    enrichment works on a fully extracted build; its facts carry extractor "llm" and their sentence.
    The deep extractor's reader is scripted here (its real llama.cpp replies are tested in
    tests/extract/test_llm_extractor.py); the graph, index and DVC are real."""
    from enrich_rag.extract.llm_extractor import LLMExtractor
    from enrich_rag.llm.prompts import fact_prompt

    copy = writable_copy(world, tmp_path / "copy")
    copy = dataclasses.replace(copy, extraction=dataclasses.replace(copy.extraction, deep="llm"))
    reply = '{"facts": [["Christopher Nolan", "directed", "Inception"]]}'
    deep = LLMExtractor(ScriptedLLM([(reply, 1.0)]), fact_prompt)
    resources = Resources(copy, llm=ScriptedLLM([("Paris", 20.0), ("London", 1.1)]), extractor=deep)
    agent = make_agent(resources, dataclasses.replace(copy.agent, max_enrich_rounds=1, max_iterations=1, hops=False, enrich_when="now"))
    assert resources.store.covered_chunks(["inception::c0"]) == {"inception::c0"}  # the seed (spaCy) read it
    answer = agent.answer(QUESTION)
    enriched = step_outputs(answer, "EnrichGraph")[0]
    assert "inception::c0" in enriched["unread_candidates"]  # ... but not deeply
    assert enriched["partition"] and deep.replies == len(enriched["new_chunks"])
    assert resources.store.chunks_read_by(["inception::c0"], "llm") == {"inception::c0"}
    written = [e for e in resources.store.neighbors([n["id"] for n in resources.store.find_nodes("Inception")]) if e["extractor"] == "llm"]
    assert written and written[0]["evidence"] == "Christopher Nolan directed Inception."
    by_partition = {p["partition"]: p["extractors"] for p in resources.writer.partitions()}
    assert set(by_partition[enriched["partition"]]) == {"llm"} and "spacy" in by_partition["seed"]  # which extractor wrote what
    assert resources.writer.verify() == []


def test_beyond_context_targets_skip_the_passages_the_reader_already_read_whole(world, tmp_path):
    """enrich_targets: beyond_context. Deep facts of a passage in the reader's context restate what it
    read; this reads the question's next passages instead (scripted reader and deep extractor as above)."""
    from enrich_rag.extract.llm_extractor import LLMExtractor
    from enrich_rag.llm.prompts import fact_prompt

    copy = writable_copy(world, tmp_path / "copy")
    copy = dataclasses.replace(copy, extraction=dataclasses.replace(copy.extraction, deep="llm"))
    runs = {}
    for targets in ("ranked", "beyond_context"):
        deep = LLMExtractor(ScriptedLLM([('{"facts": []}', 1.0)]), fact_prompt)
        resources = Resources(writable_copy(copy, tmp_path / targets), llm=ScriptedLLM([("Paris", 20.0)]), extractor=deep)
        agent = make_agent(
            resources,
            dataclasses.replace(copy.agent, max_enrich_rounds=1, max_iterations=1, enrich_targets=targets, hops=False, enrich_when="now"),
        )
        answer = agent.answer(QUESTION)
        read_whole = set(step_outputs(answer, "EnrichContext")[0]["chunk_ids"])
        runs[targets] = (read_whole, set(step_outputs(answer, "EnrichGraph")[0]["new_chunks"]))
        resources.close()
    read_whole, ranked = runs["ranked"]
    assert read_whole and ranked & read_whole  # the old way reads the reader's own passages first
    read_whole, beyond = runs["beyond_context"]
    assert beyond and not beyond & read_whole


def test_the_demo_story_answers_before_and_after_a_deep_enrichment_on_a_copy(world, tmp_path, monkeypatch):
    """`enrich-rag demo --enrichment`: the seed answer, the enriched answer, and the facts the deep
    extractor wrote with their chunk, on a private copy (the given build gains no partition). Reader
    and deep extractor scripted as above; graph, index and DVC are real."""
    from enrich_rag.eval.story import pick, tell
    from enrich_rag.extract.llm_extractor import LLMExtractor
    from enrich_rag.llm.prompts import fact_prompt

    _surface_one(monkeypatch)
    config = dataclasses.replace(world, extraction=dataclasses.replace(world.extraction, deep="llm"))
    config = dataclasses.replace(config, agent=dataclasses.replace(config.agent, max_enrich_rounds=1, max_iterations=1))
    deep = LLMExtractor(ScriptedLLM([('{"facts": [["Christopher Nolan", "directed", "Inception"]]}', 1.0)]), fact_prompt)
    reader = ScriptedLLM([("Paris", 20.0), ("Paris", 20.0), ("London", 1.1)])
    before_partitions = committed_partitions(Path(world.paths.graph))
    told = tell(config, {"question": QUESTION, "answers": ["London"]}, tmp_path / "story", llm=reader, extractor=deep)
    assert told["before"]["answer"] == "Paris" and not told["before"]["correct"] and not told["before"]["sure"]
    assert told["after"]["answer"] == "London" and told["after"]["correct"]
    assert told["enrichment"]["rounds"] == 1 and told["enrichment"]["partitions"]
    assert ("Christopher Nolan", "directed", "Inception", "inception::c0", "llm") in {
        (f["src_name"], f["relation"], f["dst_name"], f["chunk_id"], f["extractor"]) for f in told["facts"]
    }
    assert committed_partitions(Path(world.paths.graph)) == before_partitions  # the build told about is untouched
    rows = [
        {
            "id": q,
            "method": m,
            "question": f"{q}?",
            "gold": ["a"],
            "prediction": p,
            "em": em,
            "enrich_rounds": r,
            "trace": {"sure": sure},
        }
        for q, m, p, em, r, sure in (
            ("q1", "enrichrag_no_enrich", "a", 1.0, 0, False),
            ("q1", "enrichrag", "a", 1.0, 1, True),
            ("q2", "enrichrag_no_enrich", "b", 0.0, 0, False),
            ("q2", "enrichrag", "a", 1.0, 0, True),
        )
    ]
    assert pick(rows)["id"] == "q1" and pick(rows)["seed"] == "unsure"  # right but unsure, then sure after enriching
    rows[3]["enrich_rounds"] = 1  # q2 was wrong and enrichment made it right: the better story, picked first
    assert pick(rows) == {"id": "q2", "question": "q2?", "answers": ["a"], "seed": "wrong", "seed_answer": "b", "enriched_answer": "a"}
    rows[3]["em"] = rows[1]["em"] = 0.0
    assert pick(rows) is None


def test_an_unreadable_answer_leaves_a_trace_that_is_strict_json(world, tmp_path, spacy_extractor):
    """A reply with no log-probs (or a copied line) reads as infinite perplexity; the trace and the API's
    reply carry it as null, since JSON has no infinity and the web server refuses to send one."""
    import json

    agent, _ = loop_agent(world, tmp_path, spacy_extractor, [("Paris", math.inf)], allow_enrich=False, max_iterations=1)
    answer = agent.answer(QUESTION)
    assert math.isinf(answer.perplexity) and not answer.sure
    reply = json.loads(json.dumps(answer.to_dict(), allow_nan=False))
    checks = [s for s in reply["trace"]["steps"] if s["tool"] == "CheckSufficiency"]
    decide = [s for s in reply["trace"]["steps"] if s["tool"] == "AnalyzeDecide"]
    assert checks[0]["outputs"]["perplexity"] is None and decide[0]["inputs"]["perplexity"] is None


def test_a_planned_chain_reads_each_hop_on_its_own_and_answers_with_the_last(world, tmp_path, spacy_extractor):
    """The plan's second hop is searched with the first hop's answer filled in: its own search finds the
    director's page, which the question alone never names. Every hop's passages are cited and drawn."""
    script = [(CHAIN, 2.0), ("Christopher Nolan", 1.1), ("London", 1.1)]
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, script, hops=True)
    answer = agent.answer(QUESTION, enrich="never")
    assert step_outputs(answer, "Plan")[0] == {"hops": ["Who directed Inception?", "Where was #1 born?"], "kind": "chain"}
    first, second = answer.chain
    assert first["question"] == "Who directed Inception?" and first["answer"] == "Christopher Nolan" and first["grounded"]
    assert second["question"] == "Where was Christopher Nolan born?" and second["answer"] == "London" and second["grounded"]
    assert answer.answer == "London" and answer.sure
    assert "nolan::c0" in second["chunk_ids"]  # the second hop's own search found the director's page
    assert [len(h["chunk_ids"]) for h in answer.chain] == [1, 1]  # one passage first (evidence.hop_k), sure at once
    assert resources.llm.prompts[2].count("Question: Where was Christopher Nolan born?") == 1  # the hop's question, filled
    cited = {c.chunk_id for c in answer.citations}
    drawn = {n["chunk_id"] for n in answer.subgraph["nodes"] if n["kind"] == "passage"}
    assert set(first["chunk_ids"]) | set(second["chunk_ids"]) <= cited and cited <= drawn
    assert [s.kind for s in answer.trace.steps].count("GraphRank") == 2  # one search (and neighbourhood read) per hop


@pytest.mark.parametrize("reading", ["alone", "growing"])
def test_an_ungrounded_hop_reads_one_passage_more_then_says_so(world, tmp_path, spacy_extractor, reading):
    """A sub-answer no passage it read states is not taken as sure, however low its perplexity: the hop
    reads once more (the next passage on its own, or one passage wider), and the chain is marked unsure."""
    script = [(CHAIN, 2.0), ("Steven Spielberg", 1.1), ("Steven Spielberg", 1.05), ("Los Angeles", 1.1)]
    world = dataclasses.replace(world, evidence=dataclasses.replace(world.evidence, hop_reading=reading))
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, script, hops=True, max_iterations=1)
    answer = agent.answer(QUESTION, enrich="never")
    first = answer.chain[0]
    assert first["answer"] == "Steven Spielberg" and not first["grounded"]
    contexts = [s["chunk_ids"] for s in step_outputs(answer, "EnrichContext")[:2]]
    if reading == "growing":
        assert len(contexts[1]) == 2 and contexts[1][0] == contexts[0][0]  # the retry: one passage wider
    else:
        assert len(contexts[1]) == 1 and contexts[1] != contexts[0]  # the retry: the next passage, alone
    assert first["chunk_ids"] == contexts[1]  # the retry read with the lower perplexity
    assert not answer.sure  # an ungrounded hop leaves the answer unsure


def test_a_hop_reading_alone_stops_at_its_first_grounded_read(world, tmp_path, spacy_extractor):
    """Perplexities of two different passages each read alone do not rank them: the first read (in the
    tree's order) that states its answer is the hop's, though a later one might read more surely."""
    script = [(CHAIN, 2.0), ("Steven Spielberg", 1.01), ("Leonardo DiCaprio", 1.5), ("an unread place", 1.5)]
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, script, hops=True, max_iterations=3, ppl_threshold=1.0)
    answer = agent.answer(QUESTION, enrich="never")
    first, second = answer.chain
    reads = step_outputs(answer, "CheckSufficiency")
    assert [r["answer"] for r in reads[:2]] == ["Steven Spielberg", "Leonardo DiCaprio"]
    assert [r.get("grounded") for r in reads[:2]] == [False, True] and reads[1]["reason"] == "grounded"
    assert first["answer"] == "Leonardo DiCaprio" and first["grounded"] and first["chunk_ids"] == ["dicaprio::c0"]
    assert second["question"] == "Where was Leonardo DiCaprio born?"  # the chain went on from the grounded read


def test_a_hop_reads_in_pageranks_order_when_hop_selection_says_so(world, tmp_path, spacy_extractor):
    """`evidence.hop_selection: pagerank`: a hop's reads, one passage each, follow PageRank's top passages
    for the hop's question; the whole question still reads its tree."""
    script = [(CHAIN, 2.0), ("Steven Spielberg", 1.01), ("Leonardo DiCaprio", 1.5), ("an unread place", 1.5)]
    world = dataclasses.replace(world, evidence=dataclasses.replace(world.evidence, hop_selection="pagerank"))
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, script, hops=True, max_iterations=3, max_reader_calls=20)  # 7 calls
    answer = agent.answer(QUESTION, enrich="never")
    ranked = [r["chunk_id"] for r in step_outputs(answer, "GraphRank")[0]["pagerank_top"]]
    reads = [c["chunk_ids"] for c in step_outputs(answer, "EnrichContext")[:2]]
    assert reads == [ranked[:1], ranked[1:2]]  # PageRank's first passage alone, then its second alone
    assert ranked[1] == "dicaprio::c0" and answer.chain[0]["chunk_ids"] == ["dicaprio::c0"] and answer.chain[0]["grounded"]


def test_an_ungrounded_hop_is_enriched_and_only_that_hop_is_read_again(world, tmp_path, spacy_extractor, monkeypatch):
    """The hop's gap is precise: its reads stated no answer. EnrichGraph extracts the hop's unread passages
    (the director's page, which the seed never read), writes a partition, and the hop alone is read again
    with what the enrichment surfaced (arranged here: the director's page, as if its new facts lifted it).
    The second hop then goes on from the grounded answer; one enrichment round in all."""

    def surfaced(before, ranking):
        if before.sufficiency is None or ranking is None:
            return []
        return [p for p in ranking.passages if p.id.startswith("nolan::")]

    monkeypatch.setattr(whole_read, "_surfaced", surfaced)
    script = [(CHAIN, 2.0), ("Steven Spielberg", 1.1), ("Steven Spielberg", 1.05), ("Christopher Nolan", 1.1), ("London", 1.1)]
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, script, hops=True, max_iterations=1, max_enrich_rounds=1)
    answer = agent.answer(QUESTION)
    decide = step_outputs(answer, "AnalyzeDecide")
    assert decide == [{"reason": "hop 1: no passage it read states its answer", "decision": "enrich"}]
    enriched = step_outputs(answer, "EnrichGraph")[0]
    assert "nolan::c0" in enriched["new_chunks"] and enriched["partition"] in committed_partitions(Path(resources.config.paths.graph))
    assert answer.trace.step_names().count("EnrichGraph") == 1 and answer.trace.partitions_written == [enriched["partition"]]
    first, second = answer.chain
    assert first["answer"] == "Christopher Nolan" and first["grounded"] and "nolan::c0" in first["chunk_ids"]
    assert second["question"] == "Where was Christopher Nolan born?" and second["answer"] == "London" and second["grounded"]
    assert answer.answer == "London" and answer.sure and resources.writer.verify() == []

    unenriched, _ = loop_agent(world, tmp_path / "off", spacy_extractor, script, hops=True, max_iterations=1, max_enrich_rounds=1)
    kept = unenriched.answer(QUESTION, enrich="never")
    assert "EnrichGraph" not in kept.trace.step_names() and not kept.chain[0]["grounded"] and not kept.sure


def test_side_by_side_hops_are_composed_by_one_final_read(world, tmp_path, spacy_extractor):
    """Hops that name no earlier answer are read side by side; one last read over their answers (fact
    lines) and passages answers the question. A hop's answer is shown in the chain, never as a source."""
    plan = '{"hops": ["Who directed Inception?", "Where was Christopher Nolan born?"]}'
    script = [(plan, 2.0), ("Christopher Nolan", 1.1), ("London", 1.1), ("London", 1.2)]
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, script, hops=True)
    answer = agent.answer(QUESTION, enrich="never")
    assert step_outputs(answer, "Plan")[0]["kind"] == "parallel" and answer.answer == "London"
    final = resources.llm.prompts[-1]
    assert "Fact: Who directed Inception? | is answered by | Christopher Nolan" in final
    assert [h["answer"] for h in answer.chain] == ["Christopher Nolan", "London"]
    assert answer.citations and all(isinstance(c, PassageCitation) or "is answered by" not in c.fact for c in answer.citations)
    assert any(c.chunk_id.startswith("inception::") for c in answer.citations)  # the passage the hop read


def test_a_comparison_is_read_as_one_without_a_plan_call(world, tmp_path, spacy_extractor):
    """`agent.compare_in_one_read` (the default): both sides are read in one read, no Plan call (the
    dates are then read a side at a time, as after any comparison), and the Route step says why; off,
    the same question is planned as side-by-side hops."""
    question = "Who was born first, Christopher Nolan or Leonardo DiCaprio?"
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("Christopher Nolan", 1.01)], hops=True)
    answer = agent.answer(question, enrich="never")
    assert "Plan" not in answer.trace.step_names() and step_outputs(answer, "Route") == [{"decision": "whole", "reason": "comparison"}]
    assert not answer.chain and answer.answer == "Christopher Nolan"
    assert len(resources.llm.prompts) == 3 and "Compare" in answer.trace.step_names()  # one read, then a date a side

    plan = '{"hops": ["When was Christopher Nolan born?", "When was Leonardo DiCaprio born?"]}'
    script = [(plan, 2.0), ("1970", 1.1), ("1974", 1.1), ("Christopher Nolan", 1.01)]
    planned, _ = loop_agent(world, tmp_path / "hops", spacy_extractor, script, hops=True, compare_in_one_read=False)
    answer = planned.answer(question, enrich="never")
    assert "Plan" in answer.trace.step_names() and "Route" not in answer.trace.step_names() and len(answer.chain) == 2


def test_a_hop_asks_its_own_question_of_a_passage_an_earlier_hop_read(world, tmp_path, spacy_extractor):
    """Two hops that read the same page each ask it their own question: an answer read for one question
    is never handed to another because the context is the same."""
    plan = '{"hops": ["Who directed Inception?", "Who stars in Inception?"]}'
    script = [(plan, 2.0), ("Christopher Nolan", 1.1), ("Leonardo DiCaprio", 1.1), ("Christopher Nolan", 1.2)]
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, script, hops=True)
    answer = agent.answer("Who directed Inception and who stars in it?", enrich="never")
    first, second = answer.chain
    assert first["chunk_ids"] == second["chunk_ids"] == ["inception::c0"]  # the same page read by both
    assert (first["answer"], second["answer"]) == ("Christopher Nolan", "Leonardo DiCaprio")
    assert not any(r.get("reused") for r in step_outputs(answer, "CheckSufficiency"))
    assert sum("Question: Who stars in Inception?" in p for p in resources.llm.prompts) == 1


def test_a_plan_that_is_no_plan_falls_back_to_the_question_read_as_one(world, tmp_path, spacy_extractor):
    script = [('{"hops": ["Who designed the Starling Bridge?", "Where was #1 born?"]}', 2.0), ("London", 1.1)]
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, script, hops=True, bridge_check=False)
    answer = agent.answer(QUESTION, enrich="never")
    assert step_outputs(answer, "Plan")[0] == {
        "hops": [QUESTION],
        "kind": "single",
        "note": "hop 1 asks about nothing the question names",
    }
    assert answer.chain == [] and answer.answer == "London" and "Hop" not in answer.trace.step_names()


def test_the_loop_reads_the_confidence_model_fitted_on_its_corpus(world, tmp_path, spacy_extractor):
    """The file `python -m benchmarks fit_confidence` writes into the corpus's data folder decides sure and unsure:
    here P(wrong) = sigmoid(2 log perplexity), so a read at perplexity 1.2 (under the threshold of 1.5: sure
    by perplexity alone) has confidence 0.41 and is unsure. A model fitted on another reader's answers is
    not used."""
    from benchmarks.fit_confidence import write_model
    from enrich_rag.agent.confidence import CONFIDENCE_FILE, FEATURES, WrongAnswerModel
    from enrich_rag.llm.models import model_name

    model = WrongAnswerModel((2.0,) + (0.0,) * (len(FEATURES) - 1), 0.0, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES))
    root = tmp_path / "data"
    config = dataclasses.replace(world, paths=dataclasses.replace(world.paths, root=str(root)))
    write_model(root / CONFIDENCE_FILE, model_name(world.llm), {"own": "results/own"}, "enrichrag_no_enrich", model)
    agent, _ = loop_agent(config, tmp_path, spacy_extractor, [("London", 1.2)])
    answer = agent.answer(QUESTION)
    expected = 1.0 - 1.0 / (1.0 + math.exp(-2.0 * math.log(1.2)))
    assert answer.confidence == pytest.approx(expected, abs=1e-3) and answer.answer == "London"
    assert answer.trace.step_names()[-1] == "Confidence" and step_outputs(answer, "Confidence")[0]["confidence"] == answer.confidence
    assert not answer.sure and answer.to_dict()["confidence"] == answer.confidence

    lenient, _ = loop_agent(config, tmp_path / "lenient", spacy_extractor, [("London", 1.2)], sure_confidence=0.4)
    assert lenient.answer(QUESTION).sure

    write_model(root / CONFIDENCE_FILE, "another-reader", {"own": "results/own"}, "enrichrag_no_enrich", model)
    other, _ = loop_agent(config, tmp_path / "other", spacy_extractor, [("London", 1.2)])
    unfitted = other.answer(QUESTION)
    assert unfitted.confidence is None and unfitted.sure and "Confidence" not in unfitted.trace.step_names()


KEPT_WHOLE = '{"hops": ["Where was the director of Inception born?"]}'


def test_a_whole_read_that_stopped_at_the_bridge_goes_on_to_the_rest_of_the_question(world, tmp_path, spacy_extractor):
    """The planner kept the question whole and the whole read answered the director, whom the question
    only describes. The description read as a hop of its own gives the same answer: the whole read
    stopped at the bridge, so the rest of the question, the director's name in its place, is hop 2."""
    script = [(KEPT_WHOLE, 2.0), ("Christopher Nolan", 1.1), ("Christopher Nolan", 1.1), ("London", 1.1)]
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, script, hops=True, max_iterations=1)
    answer = agent.answer(QUESTION, enrich="never")
    bridge = step_outputs(answer, "Bridge")[0]
    assert bridge["description"] == "the director of Inception" and bridge["goes_on"]
    assert bridge["first"] == "What is the director of Inception?" and bridge["rest"] == "Where was #1 born?"
    first, second = answer.chain
    assert first["answer"] == "Christopher Nolan" and first["grounded"]
    assert second["question"] == "Where was Christopher Nolan born?" and second["answer"] == "London" and second["grounded"]
    assert answer.answer == "London" and answer.sure
    assert "nolan::c0" in second["chunk_ids"] and "nolan::c0" in {c.chunk_id for c in answer.citations}
    assert len(resources.llm.prompts) == 4  # the plan, the whole read, the two hops


def test_a_whole_read_past_the_bridge_stands_and_the_check_can_be_turned_off(world, tmp_path, spacy_extractor):
    """The whole read answered something else than the description's hop: it did not stop at the
    bridge, and its answer stands. With `bridge_check: false` nothing more is read."""
    script = [(KEPT_WHOLE, 2.0), ("London", 1.1), ("Christopher Nolan", 1.1)]
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, script, hops=True, max_iterations=1)
    answer = agent.answer(QUESTION, enrich="never")
    assert answer.answer == "London" and answer.chain == [] and not step_outputs(answer, "Bridge")[0]["goes_on"]
    assert len(resources.llm.prompts) == 3

    off, resources = loop_agent(world, tmp_path / "off", spacy_extractor, script, hops=True, max_iterations=1, bridge_check=False)
    kept = off.answer(QUESTION, enrich="never")
    assert kept.answer == "London" and "Bridge" not in kept.trace.step_names() and len(resources.llm.prompts) == 2


def test_with_a_fitted_model_only_an_answer_it_is_unsure_of_is_enriched(world, tmp_path, spacy_extractor, monkeypatch):
    """AnalyzeDecide asks the corpus's model, not the perplexity threshold: a read at perplexity 1.2 (sure
    by perplexity, threshold 1.5) has confidence 0.41 under P(wrong) = sigmoid(2 log perplexity), so it is
    enriched; with `sure_confidence` 0.4 the same read is answered at once. Without a model it is sure by
    perplexity and nothing is enriched."""
    from benchmarks.fit_confidence import write_model
    from enrich_rag.agent.confidence import CONFIDENCE_FILE, FEATURES, WrongAnswerModel
    from enrich_rag.llm.models import model_name

    _surface_one(monkeypatch)
    model = WrongAnswerModel((2.0,) + (0.0,) * (len(FEATURES) - 1), 0.0, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES))
    root = tmp_path / "data"
    config = dataclasses.replace(world, paths=dataclasses.replace(world.paths, root=str(root)))
    write_model(root / CONFIDENCE_FILE, model_name(world.llm), {"own": "results/own"}, "enrichrag_no_enrich", model)
    script = [("London", 1.2)]
    unsure, resources = loop_agent(config, tmp_path / "unsure", spacy_extractor, script, max_iterations=1, max_enrich_rounds=1)
    answer = unsure.answer(QUESTION)
    decide = step_outputs(answer, "AnalyzeDecide")[0]
    assert decide == {"reason": "confidence 0.41 under 0.5", "confidence": pytest.approx(0.4094, abs=1e-3), "decision": "enrich"}
    assert answer.trace.step_names().count("EnrichGraph") == 1 and resources.writer.verify() == []

    sure, _ = loop_agent(config, tmp_path / "sure", spacy_extractor, script, max_iterations=1, max_enrich_rounds=1, sure_confidence=0.4)
    kept = sure.answer(QUESTION)
    assert step_outputs(kept, "AnalyzeDecide")[0]["decision"] == "answer" and "EnrichGraph" not in kept.trace.step_names()

    unfitted, _ = loop_agent(world, tmp_path / "unfitted", spacy_extractor, script, max_iterations=1, max_enrich_rounds=1)
    by_perplexity = unfitted.answer(QUESTION)
    assert step_outputs(by_perplexity, "AnalyzeDecide")[0] == {"decision": "answer"}
    assert "EnrichGraph" not in by_perplexity.trace.step_names()


def test_confidence_features_are_the_same_fitting_as_serving(world, tmp_path, spacy_extractor):
    """The features the loop scores an answer with (its Confidence record) equal the ones a model is fitted
    on: the evaluation's row for the same answer, through `fit_confidence.row_features`."""
    import json

    from benchmarks.fit_confidence import row_features, write_model
    from enrich_rag.agent.confidence import CONFIDENCE_FILE, FEATURES, WrongAnswerModel
    from enrich_rag.agent.trace import Confident, ContextBuilt
    from enrich_rag.eval.datasets import QAItem
    from enrich_rag.eval.methods import prediction_of
    from enrich_rag.eval.runner import score_row
    from enrich_rag.llm.models import model_name
    from enrich_rag.storage.passages import PassageStore, read_passages

    model = WrongAnswerModel((1.0,) * len(FEATURES), 0.0, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES))
    root = tmp_path / "data"
    config = dataclasses.replace(world, paths=dataclasses.replace(world.paths, root=str(root)))
    write_model(root / CONFIDENCE_FILE, model_name(world.llm), {"own": "results/own"}, "enrichrag_no_enrich", model)
    script = [("Paris", 3.0), ("London", 1.2)]
    agent, _ = loop_agent(config, tmp_path, spacy_extractor, script, max_iterations=2, max_enrich_rounds=1)
    answer = agent.answer(QUESTION)  # enriched, then read again: two rounds of reads
    assert "EnrichGraph" in answer.trace.step_names() and len(answer.trace.reads()) == 4
    served = answer.trace.first(Confident)
    assert served is not None

    item = QAItem(id="q1", question=QUESTION, answers=("London",))
    row = json.loads(json.dumps(score_row(item, "enrichrag_no_enrich", prediction_of(answer, PassageStore(world.paths.chunks)), (2,))))
    texts = {p.id: p.content for p in read_passages(world.paths.chunks)}
    assert row_features(row, texts) == served.features
    # the row keeps every passage the reader was handed, and their documents
    handed = [c for context in answer.trace.records(ContextBuilt) for c in context.chunk_ids]
    assert row["trace"]["read_chunks"] == list(dict.fromkeys(handed)) and handed
    assert row["read_docs"] == list(dict.fromkeys(c.split("::")[0] for c in handed))


def test_a_fact_citation_is_read_as_its_whole_chunk_by_the_confidence_features():
    """Fitting read a fact citation's chunk, serving once read its sentence alone: now both read the chunk."""
    from enrich_rag.agent.confidence import features_of
    from enrich_rag.evidence.citations import citations

    fact = Edge("Nolan", "directed", "Inception", "Nolan directed Inception.", "nolan::c0", "nolan", id="f1")
    chunks = {"nolan::c0": "Christopher Nolan: Nolan directed Inception. Nolan was born in London in 1970."}
    cited = [c.chunk_id for c in citations([fact])]
    features = features_of(QUESTION, "London", {"perplexity": 1.2}, cited, lambda ids: [chunks[i] for i in ids])
    assert cited == ["nolan::c0"] and features["ungrounded"] == 0.0


def test_a_whole_read_that_states_its_answer_is_not_read_again(world, tmp_path, spacy_extractor):
    """`agent.grow: unstated`: the first read's answer is a span of what it read, so however high its
    perplexity, no wider context is read to confirm it (the perplexity rule would read on)."""
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("Christopher Nolan", 1.9)], grow="unstated")
    answer = agent.answer("Who directed Inception?", enrich="never")
    assert len(resources.llm.prompts) == 1 and answer.answer == "Christopher Nolan"
    assert [o["reason"] for o in step_outputs(answer, "CheckSufficiency")] == [GROUNDED]

    by_perplexity, old = loop_agent(world, tmp_path / "old", spacy_extractor, [("Christopher Nolan", 1.9)], grow="perplexity")
    by_perplexity.answer("Who directed Inception?", enrich="never")
    assert len(old.llm.prompts) > 1  # the same read over the threshold reads a wider context


def test_a_whole_read_that_does_not_state_its_answer_grows_and_a_stated_answer_wins(world, tmp_path, spacy_extractor):
    """An answer that none of its passages states reads one passage more; the read that states its answer
    is kept although its perplexity is higher, and reading stops there."""
    script = [("Steven Spielberg", 1.05), ("Christopher Nolan", 1.4)]
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, script, grow="unstated")
    answer = agent.answer("Who directed Inception?", enrich="never")
    assert answer.answer == "Christopher Nolan" and len(resources.llm.prompts) == 2
    reads = step_outputs(answer, "CheckSufficiency")
    assert [r["grounded"] for r in reads] == [False, True] and reads[-1]["reason"] == GROUNDED
    contexts = [o["chunk_ids"] for o in step_outputs(answer, "EnrichContext")]
    assert len(contexts[1]) == len(contexts[0]) + 1 and contexts[1][: len(contexts[0])] == contexts[0]

    never = [("Steven Spielberg", 1.05)]
    capped, capped_resources = loop_agent(world, tmp_path / "capped", spacy_extractor, never, grow="unstated", max_iterations=2)
    capped.answer("Who directed Inception?", enrich="never")
    assert len(capped_resources.llm.prompts) == 2  # never stated: max_iterations reads, none past them


def test_read_first_plans_only_when_the_whole_read_is_unsure(world, tmp_path, spacy_extractor):
    """`agent.plan_when: unsure`: a whole read that states its answer is the answer, with no Plan call;
    one that does not is planned, and the chain that grounds answers."""
    options = {"hops": True, "plan_when": "unsure", "grow": "unstated", "max_iterations": 1}
    sure, resources = loop_agent(world, tmp_path, spacy_extractor, [("Christopher Nolan", 1.9)], **options)
    answer = sure.answer("Who directed Inception?", enrich="never")
    assert "Plan" not in answer.trace.step_names() and len(resources.llm.prompts) == 1

    script = [("Paris", 1.1), (CHAIN, 2.0), ("Christopher Nolan", 1.1), ("London", 1.1)]
    unsure, resources = loop_agent(world, tmp_path / "unsure", spacy_extractor, script, **options)
    answer = unsure.answer(QUESTION, enrich="never")
    tools = answer.trace.step_names()
    assert tools.index("CheckSufficiency") < tools.index("Plan")  # read first, then planned
    assert answer.answer == "London" and [h["answer"] for h in answer.chain] == ["Christopher Nolan", "London"]


def test_read_first_keeps_the_whole_read_when_the_chain_does_not_ground(world, tmp_path, spacy_extractor):
    """A chain whose last hop states nothing it read is no better than the whole read it was asked to
    improve on: the whole read answers, and no chain is shown."""
    script = [("Paris", 1.1), (CHAIN, 2.0), ("Christopher Nolan", 1.1), ("Tokyo", 1.1)]
    options = {"hops": True, "plan_when": "unsure", "grow": "unstated", "max_iterations": 1}
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, script, **options)
    answer = agent.answer(QUESTION, enrich="never")
    assert "Plan" in answer.trace.step_names() and len(step_outputs(answer, "Hop")) == 2
    assert answer.answer == "Paris" and answer.chain == [] and not answer.sure


def test_in_the_background_an_unsure_answer_queues_its_round_and_the_job_writes_it_later(world, tmp_path, spacy_extractor):
    """`enrich_when: background`: the unsure answer comes back at once with its round queued (no
    partition, no second read); running the job writes the partition the loop would have waited for, and
    the same question asked again walks the new facts."""
    script = [("Paris", 20.0)]
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, script, max_enrich_rounds=1, max_iterations=1, enrich_when="background")
    answer = agent.answer(QUESTION)
    assert answer.trace.step_names() == [
        "AnalyzeQuery",
        "GraphRank",
        "EnrichContext",
        "CheckSufficiency",
        "AnalyzeDecide",
        "QueueEnrichment",
    ]
    assert answer.trace.partitions_written == [] and committed_partitions(Path(resources.config.paths.graph)) == ["seed"]
    (job,) = resources.jobs.jobs("pending")
    assert answer.queued == [job.id] and answer.to_dict()["queued"] == [job.id] and job.question == QUESTION
    assert any(c.startswith("nolan::") for c in job.candidates)  # the gap the graph can see, as the loop ranked it
    assert agent.answer(QUESTION).queued == [job.id]  # asked again before it ran: the same job, not a second
    assert len(resources.jobs.jobs()) == 1

    (ran,) = resources.jobs.run_pending(agent.jobs.run)
    assert ran.state == "done" and ran.result["partition"] in committed_partitions(Path(resources.config.paths.graph))
    assert resources.jobs.jobs("pending", "running") == [] and resources.writer.verify() == []
    again = agent.answer(QUESTION, enrich="never")
    new_facts = {e["id"] for e in resources.store.rows_of([ran.result["partition"]])[1]}
    assert new_facts and again.trace.first(Ranked).wire["pagerank_graph"][1] > answer.trace.first(Ranked).wire["pagerank_graph"][1]


def test_enrich_never_never_queues_and_a_bad_mode_is_refused(world, tmp_path, spacy_extractor):
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("Paris", 20.0)], max_iterations=1, enrich_when="background")
    assert agent.answer(QUESTION, enrich="never").queued == [] and resources.jobs.jobs() == []
    for bad in ("later", False, True):  # one type: the bools of earlier releases are refused, not guessed at
        with pytest.raises(QueryError, match="enrich must be 'never', 'now' or 'background'"):
            agent.answer(QUESTION, enrich=bad)


def test_a_spent_reader_budget_answers_with_the_best_read_of_the_question_so_far(world, tmp_path, spacy_extractor):
    """`agent.max_reader_calls`: the answer that would read on (none of its reads states its answer) stops
    before the call past its budget and answers with its best whole read so far, flagged; a budget the
    question fits in changes nothing."""
    script = [("Steven Spielberg", 1.05), ("Christopher Nolan", 1.4), ("Christopher Nolan", 1.3)]
    bounded, bounded_resources = loop_agent(world, tmp_path, spacy_extractor, script, grow="unstated", max_reader_calls=1)
    answer = bounded.answer("Who directed Inception?", enrich="never")
    assert len(bounded_resources.llm.prompts) == 1 and answer.trace.reader_calls() == 1
    assert answer.answer == "Steven Spielberg" and answer.spent == "1 of 1 reader calls made"
    assert answer.citations and answer.to_dict()["spent"] == answer.spent

    roomy, _ = loop_agent(world, tmp_path / "roomy", spacy_extractor, script, grow="unstated", max_reader_calls=6)
    unbounded = roomy.answer("Who directed Inception?", enrich="never")
    assert unbounded.answer == "Christopher Nolan" and unbounded.spent is None


def test_a_budget_spent_before_the_comparison_is_read_again_answers_with_the_read(world, tmp_path, spacy_extractor):
    """A comparison's sides are read again after its read (Compare, a reader step): a budget spent by
    then answers with the read's own answer, flagged, rather than failing the question (found by the
    house re-run: `28.9 of 25 reader seconds spent` ended an evaluation)."""
    question = "Who was born first, Christopher Nolan or Steven Spielberg?"
    script = [("Christopher Nolan", 1.05), ("1970", 1.1), ("1946", 1.1)]
    bounded, _ = loop_agent(world, tmp_path, spacy_extractor, script, max_reader_calls=1)
    answer = bounded.answer(question, enrich="never")
    assert answer.answer == "Christopher Nolan" and answer.spent == "1 of 1 reader calls made"
    assert "Compare" not in answer.trace.step_names()

    roomy, _ = loop_agent(world, tmp_path / "roomy", spacy_extractor, script, max_reader_calls=6)
    compared = roomy.answer(question, enrich="never")
    assert compared.spent is None and "Compare" in compared.trace.step_names()


def test_a_comparison_whose_two_side_reads_do_not_fit_the_answers_seconds_answers_with_its_read(world, tmp_path, spacy_extractor):
    """Compare reads each side's question over the lines, nothing of it cached: forecast as two reads at the
    reader's pace, it is not made past `agent.max_answer_s`, and the read's own answer stands, flagged."""
    from enrich_rag.llm.base import Pace

    question = "Who was born first, Christopher Nolan or Steven Spielberg?"
    script = [("Christopher Nolan", 1.05), ("1970", 1.1), ("1946", 1.1)]
    bounded, resources = loop_agent(world, tmp_path, spacy_extractor, script, max_answer_s=100.0)
    resources.llm.pace = Pace(prompt_char_s=1.0, generated_token_s=0.0)  # a second a character: no two reads fit
    answer = bounded.answer(question, enrich="never")
    assert "Compare" not in answer.trace.step_names() and len(resources.llm.prompts) == 1
    assert answer.answer == "Christopher Nolan" and "s left for 2 reads forecast at" in (answer.spent or "")


def test_a_copied_worked_example_is_asked_again_only_where_that_call_fits_the_answers_seconds(world, tmp_path, spacy_extractor):
    """A reply that repeats a worked example is asked again without the examples (llm/reader.py), a whole
    prompt computed anew: at a pace where that call cannot fit `agent.max_answer_s` it is not made, and
    the example's answer is never the answer."""
    from enrich_rag.llm.base import Pace

    script = [("Tasmania", 1.05), ("Christopher Nolan", 1.1)]
    bounded, resources = loop_agent(world, tmp_path, spacy_extractor, script, max_answer_s=100.0)
    resources.llm.pace = Pace(prompt_char_s=1.0, generated_token_s=0.0)
    answer = bounded.answer("Who directed Inception?", enrich="never")
    assert len(resources.llm.prompts) == 1 and answer.answer == "" and "s left for a read forecast" in (answer.spent or "")

    roomy, roomy_resources = loop_agent(world, tmp_path / "roomy", spacy_extractor, script, max_answer_s=100.0)
    assert roomy.answer("Who directed Inception?", enrich="never").answer == "Christopher Nolan"
    assert "Velmar" not in roomy_resources.llm.prompts[1]


def test_a_reader_call_forecast_to_end_past_the_answers_seconds_is_not_made():
    """`agent.max_answer_s` counts the whole answer from its start, an EnrichGraph round excepted; a reader
    call starts only when the longest call the answer has made (and `FORECAST_MARGIN`) still fits."""
    import time

    from enrich_rag.agent.trace import BudgetSpent, ReaderBudget, StepKind, Trace

    trace = Trace("q", budget=ReaderBudget(calls=10, seconds=10.0, started=time.monotonic() - 8.0))  # 2 s left
    with trace.step(StepKind.CHECK_SUFFICIENCY):
        pass
    trace.steps[-1].seconds = 1.5  # as if the reader had taken that long: a call like it still fits
    with trace.step(StepKind.CHECK_SUFFICIENCY):
        pass
    trace.steps[-1].seconds = 2.5
    with trace.step(StepKind.GRAPH_RANK):  # a step that calls no reader is not stopped
        pass
    with pytest.raises(BudgetSpent, match=r"of 10 s spent, [0-9.]+ s left for a reader call forecast at 2\.5 s"):
        with trace.step(StepKind.CHECK_SUFFICIENCY):
            pass
    with trace.step(StepKind.ENRICH_GRAPH):  # an enrichment round is bounded by the time limit, not here
        pass
    trace.steps[-1].seconds = 5.0
    with trace.step(StepKind.CHECK_SUFFICIENCY):  # 2 + 5 s left: a 2.5 s call fits again
        pass


def test_a_question_past_its_answer_time_reads_nothing_more_and_says_so(world, tmp_path, spacy_extractor):
    """`answer_by` (a request's time limit less `serve.answer_margin_s`): no reader call starts past it."""
    import time

    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("Christopher Nolan", 1.2)])
    answer = agent.answer("Who directed Inception?", enrich="never", hooks=Hooks(answer_by=time.monotonic()))
    assert resources.llm.prompts == [] and answer.spent == "the time limit is near" and answer.answer == ""
