"""A question read as hops: Plan, each hop read on its own (agent/whole_read.py's rounds on its
sub-question), the hops composed into one answer; and the bridge check of a question kept whole that
names a thing by a description."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from enrich_rag.agent.hops import Hop, chain_evidence, grounded, hop_analysis, merged_subgraph, same_answer
from enrich_rag.agent.memory import recalled
from enrich_rag.agent.plan import CHAIN, FIRST_ANSWER, Plan, bridge_split, make_plan
from enrich_rag.agent.steps import QuestionState, SearchRound, Steps
from enrich_rag.agent.sufficiency import ENRICH, Sufficiency, check_sufficiency
from enrich_rag.agent.trace import Bridged, HopAnswered, Planned, Read, Routed, StepKind
from enrich_rag.agent.whole_read import search_round
from enrich_rag.evidence.query_analysis import COMPARISON, analyze_query


def plans(steps: Steps, state: QuestionState) -> bool:
    """Whether the question gets a Plan call: with hops, always but for a comparison read as one
    (`agent.compare_in_one_read`; the Route step says so)."""
    if not steps.config.hops:
        return False
    if not (steps.config.compare_in_one_read and state.analysis.kind == COMPARISON):
        return True
    with state.trace.step(StepKind.ROUTE, query=state.question) as step:
        step.record = Routed("whole", "comparison")
    return False


def plan(steps: Steps, state: QuestionState) -> Plan:
    with state.trace.step(StepKind.PLAN, query=state.question) as step:
        made = make_plan(steps.resources.llm, state.question)
        step.record = Planned(made)
    return made


def chain(steps: Steps, state: QuestionState, made: Plan) -> tuple[list[Hop], SearchRound]:
    """Each hop searched and read on its own, its slots filled with the answers before it. A chain
    answers with its last hop; side-by-side hops and comparisons with one read over all of them.
    A hop that stays ungrounded is where EnrichGraph goes (when enrichment is allowed, earliest hops
    first, `max_enrich_rounds` in all)."""
    hops: list[Hop] = []
    rounds_left = steps.config.max_enrich_rounds if state.allow_enrich else 0
    for index in range(len(made.hops)):
        answers = [h.answer for h in hops]
        earlier = answers if made.kind == CHAIN else []
        read, enriched = hop(steps, state, made.filled(index, answers), index=index + 1, earlier=earlier, may_enrich=rounds_left > 0)
        rounds_left -= enriched
        hops.append(read)
    return hops, composed(steps, state, made.kind, hops=hops)


def hop(
    steps: Steps, state: QuestionState, question: str, index: int, earlier: Sequence[str], may_enrich: bool = False
) -> tuple[Hop, bool]:
    """One hop read on its own tree, and whether it used an enrichment round. An ungrounded hop (when
    `may_enrich`) has its own passages and PageRank's top for it extracted deeply, and only it is read
    again. In a chain (`earlier`: the answers before it) a hop that reads an earlier answer back is
    not grounded."""
    sub = hop_analysis(analyze_query(question, steps.resources.nlp, steps.resources.store), earlier)
    grounding = functools.partial(grounded, question=sub.question, earlier=earlier)
    learned = recalled(steps, state, sub, grounding=grounding, earlier=earlier)
    found = (
        learned[0]
        if learned
        else search_round(steps, state, sub, round_=0, before=SearchRound(), choice=steps.hop_choice, grounding=grounding)
    )
    enriched = False
    decided = not found.grounded and may_enrich and steps.decide_hop(state, index, found) == ENRICH
    if decided and not steps.queue(state, sub.question, found):
        enriched = True
        if steps.enrich_graph(state, sub.question, found).grew:
            retried = search_round(steps, state, sub, round_=1, before=found, choice=steps.hop_choice, grounding=grounding)
            found = retried if retried.better_than(found) else found
    sure = found.grounded if found.sufficiency else False
    read = Hop(
        index,
        sub.question,
        found.answer,
        perplexity=found.perplexity,
        grounded=sure,
        evidence=found.evidence,
        subgraph=found.subgraph,
        learned=learned[1] if learned else "",
        entities=sub.entities,
    )
    with state.trace.step(StepKind.HOP, hop=read.index, question=read.question) as step:
        step.record = HopAnswered(read)
    return read, enriched


def composed(steps: Steps, state: QuestionState, kind: str, hops: list[Hop]) -> SearchRound:
    """A chain's answer is its last hop's, with every hop's passages; side-by-side hops and
    comparisons are composed by one final read over the hops' answers."""
    drawn = [h.subgraph for h in hops]
    if kind == CHAIN and state.analysis.kind != COMPARISON:
        last = hops[-1]
        read = list(dict.fromkeys(e for h in hops for e in h.evidence))
        answer = Sufficiency(last.answer, last.perplexity, tuple(read))
        return SearchRound(answer, merged_subgraph(drawn, read), grounded=last.grounded)
    evidence = chain_evidence(hops)
    with state.trace.step(StepKind.CHECK_SUFFICIENCY, facts=len(evidence), hops=len(hops)) as step:
        result = check_sufficiency(steps.resources.llm, state.question, evidence, max_new_tokens=steps.max_new_tokens)
        step.record = Read.of(result)
    return SearchRound(result, merged_subgraph(drawn, evidence))


def bridge(steps: Steps, state: QuestionState, whole: SearchRound) -> tuple[list[Hop], SearchRound] | None:
    """A question the planner kept whole that names a thing by a description (agent/plan.py):
    the description is read as a hop of its own. When that hop answers what the whole read answered,
    the whole read stopped at the bridge, and the rest of the question, with that answer in the
    description's place, is read as hop 2, whose answer is the answer. Otherwise the whole read
    stands (None)."""
    if whole.sufficiency is None or state.analysis.kind == COMPARISON:
        return None
    split = bridge_split(state.question, steps.resources.nlp)
    if split is None:
        return None
    first, _ = hop(steps, state, split.first, index=1, earlier=[])
    goes_on = same_answer(first.answer, whole.answer)  # an empty hop answer names nothing
    with state.trace.step(StepKind.BRIDGE, description=split.description) as step:
        step.record = Bridged(split, whole.answer, first.answer, goes_on=goes_on)
    if not goes_on:
        return None
    second, _ = hop(steps, state, split.rest.replace(FIRST_ANSWER, first.answer), index=2, earlier=[first.answer])
    hops = [first, second]
    return hops, composed(steps, state, CHAIN, hops=hops)
