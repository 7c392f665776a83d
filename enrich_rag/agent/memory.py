"""What a question teaches the graph and what the graph recalls for the next one: learned facts
(evidence/learned_facts.py) read before any search, and written from an answer a line states."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from enrich_rag.agent.answer import BACKGROUND
from enrich_rag.agent.hops import Hop
from enrich_rag.agent.steps import QuestionState, SearchRound, Steps
from enrich_rag.agent.sufficiency import Sufficiency
from enrich_rag.agent.trace import Learned, Recalled, StepKind
from enrich_rag.evidence.enrich_context import Subgraph
from enrich_rag.evidence.learned_facts import learned_fact, recall
from enrich_rag.evidence.query_analysis import QueryAnalysis
from enrich_rag.index.graph_index import search_graph
from enrich_rag.llm.models import model_name
from enrich_rag.resources import Resources
from enrich_rag.storage.schema import Edge

RECALL_CANDIDATES = 5  # graph-index hits a (sub-)question looks among for a similar learned fact


def recalled(
    steps: Steps, state: QuestionState, analysis: QueryAnalysis, grounding: Callable[[Sufficiency], bool], earlier: Sequence[str] = ()
) -> tuple[SearchRound, str] | None:
    """A learned fact for this (sub-)question, before any search: the same question learned surely (its
    perplexity under the threshold) is answered from the record, with no reader call; a similar one, or a less
    sure record, has its cited passage read alone and counts only when that read states its answer.
    The round and the fact's id; None: search as usual."""
    if not steps.config.learn:
        return None
    resources = steps.resources
    similar = functools.partial(similar_facts, resources)
    found = recall(
        resources.store, analysis.question, analysis.entities, min_match=steps.config.recall_match, exclude=earlier, similar=similar
    )
    if found is None:
        return None  # the common case: no step in the trace
    with state.trace.step(StepKind.RECALL, query=analysis.question) as step:
        passage = next(iter(resources.passages.by_ids([found.fact.chunk_id])), None)
        answered = found.exact and found.perplexity < steps.threshold
        step.record = Recalled(found, "gone" if passage is None else "answered" if answered else "read")
    if passage is None:
        return None
    sub = Subgraph(evidence=[passage])
    if answered:
        return SearchRound(Sufficiency(found.fact.object, found.perplexity, (passage,)), sub), found.fact.id
    result, is_grounded, _ = steps.check_sufficiency(
        state, analysis.question, sub, iteration=0, history=[], grounding=grounding, alone=True
    )
    return (SearchRound(result, sub, grounded=True), found.fact.id) if is_grounded else None


def similar_facts(resources: Resources, question: str) -> list[str]:
    """Fact ids the graph index finds nearest to a question (a learned fact's text is its question)."""
    hits = search_graph(resources.graph_index, question, RECALL_CANDIDATES, config=resources.config.embeddings)
    return [h["id"] for h in hits if h.get("kind") == "edge"]


def taught(
    steps: Steps, state: QuestionState, hops: Sequence[Hop], read: SearchRound, grounding: Callable[[Sufficiency], bool]
) -> list[Edge]:
    """The facts this answer learned: its grounded hops, and the question itself when what was read
    states its answer (`states`; a chain: when every hop grounded); none that was recalled."""
    reader = model_name(steps.resources.config.llm)
    kept = [h for h in hops if h.grounded and not h.learned]
    facts = [learned_fact(h.question, h.answer, h.perplexity, evidence=h.evidence, subjects=h.entities, reader=reader) for h in kept]
    if read.sufficiency is not None and all(h.grounded for h in hops) and not state.recalled and grounding(read.sufficiency):
        facts.append(
            learned_fact(
                state.question, read.answer, read.perplexity, evidence=read.evidence, subjects=state.analysis.entities, reader=reader
            )
        )
    return list({f.id or f.relation: f for f in facts if f is not None}.values())


def learn(steps: Steps, state: QuestionState, when: str, facts: list[Edge]) -> None:
    """An answer's facts as one job after it (background), or one partition before it returns (now)."""
    with state.trace.step(StepKind.LEARN, facts=len(facts)) as step:
        if when == BACKGROUND:
            job = steps.resources.jobs.put_learned(state.question, [f.to_row() for f in facts])
            step.record = Learned(tuple(facts), job=job.id)
            return
        partition = steps.jobs.learn(facts).get("partition")
        step.record = Learned(tuple(facts), partition=partition)
        if partition:
            state.trace.partitions_written.append(partition)
