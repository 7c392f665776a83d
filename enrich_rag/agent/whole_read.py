"""A question read whole: the search's first read, then (where it did not state its answer) the rounds of
GraphRank -> EnrichContext -> CheckSufficiency, one passage wider each time, with EnrichGraph between
rounds. Each hop of a plan is read by the same rounds (`search_round`)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from enrich_rag.agent.hops import grounded, read_states_answer
from enrich_rag.agent.steps import QuestionState, SearchRound, Steps, context_built
from enrich_rag.agent.sufficiency import ANSWER, ENRICH, Sufficiency, recorded
from enrich_rag.agent.trace import Decided, Ranked, StepKind
from enrich_rag.evidence.context_choice import ContextChoice, ContextRound, SurfacedRound
from enrich_rag.evidence.enrich_context import Subgraph, passage_node
from enrich_rag.evidence.graph_rank import GraphRanking
from enrich_rag.evidence.lines import near_question, reading_line
from enrich_rag.evidence.query_analysis import COMPARISON, QueryAnalysis
from enrich_rag.storage.passages import Passage

SURFACED_TOP = 5  # PageRank passages a retried round compares with the round before's


def grounding_of(analysis: QueryAnalysis) -> Callable[[Sufficiency], bool]:
    """A whole read found its answer when what it read states it; a comparison's answer names one of
    the question's own sides, so only its evidence is asked."""
    if analysis.kind == COMPARISON:
        return read_states_answer
    return functools.partial(grounded, question=analysis.question)


def read_whole(steps: Steps, state: QuestionState) -> SearchRound:
    """The question read as one: first the search's top passages whole (`agent.first_read`, one reader
    call), which answers when what it read states its answer; else the tree's rounds, whose read is
    kept when it states its answer, and otherwise the lower perplexity of the two. On documentation the
    tree answered from a neighbouring line of the right page where the search's top passages read whole
    did not (bench_results/search_read_*.json)."""
    if not steps.config.first_read:
        return rounds(steps, state)
    grounding = grounding_of(state.analysis)
    first = first_read(steps, state, grounding)
    if first.grounded:
        with state.trace.step(StepKind.ANALYZE_DECIDE, perplexity=recorded(first.perplexity), threshold=steps.threshold) as step:
            step.record = Decided(ANSWER, "what the search's top passages say states the answer")
        return dataclasses.replace(first, searched=True)
    tree = rounds(steps, state)
    tree.grounded = tree.sufficiency is not None and grounding(tree.sufficiency)
    return tree if tree.better_than(first) else first


def first_read(steps: Steps, state: QuestionState, grounding: Callable[[Sufficiency], bool]) -> SearchRound:
    """One read of the search's top `agent.first_read` passages (what `EnrichRAG.search` returns) and of the
    pages the first of them names that the search follows (`agent.first_read_named`; not for a comparison),
    each cut to the units near the question's words (`agent.first_read_cut`; evidence/lines.py). A bridge
    question's first passage names the page of its second hop: read alone, it is answered with the first
    hop's entity. A comparison's answer is one of its own sides, and the page one side names (a film's
    director) was answered instead (bench_results/find_scoreboard_first_named_arm.json, 2Wiki)."""
    question, k = state.question, steps.config.first_read
    with state.trace.step(StepKind.GRAPH_RANK, query=question, round=0) as step:
        hits = steps.retriever.search(question)
        ranking = steps.retriever.rank(state.analysis, hits)
        step.record = Ranked.of(ranking)
    state.searched = (ranking, hits)
    followed = steps.retriever.followed(ranking, hits)  # looked up once: the search's order places them too
    searched = steps.retriever.order(ranking, hits, k, followed=followed)
    seen = {p.id for p in searched}
    reads_named = steps.config.first_read_named if state.analysis.kind != COMPARISON else 0
    named = [p for p in followed if p.id not in seen][:reads_named]
    ordered = [near_question(p, question, steps.config.first_read_cut) for p in [*searched, *named]]
    top = fitted(steps, state, ordered)
    nodes = [{"id": passage_node(p.id), "name": p.title or p.id, "kind": "passage", "chunk_id": p.id, "prize": 0.0} for p in top]
    sub = Subgraph(nodes=nodes, evidence=list(top))
    with state.trace.step(StepKind.ENRICH_CONTEXT, query=question, budget=k, round=0) as step:
        cut = {"fits_in_time": len(top)} if len(top) < len(ordered) else {}  # the answer's bound had room for fewer
        step.record = context_built(sub, {"read": "search", "k": k} | ({"named": len(named)} if named else {}) | cut, ())
    result, is_stated, _ = steps.check_sufficiency(state, question, sub, iteration=0, history=[], grounding=grounding, alone=True)
    return SearchRound(result, sub, tuple(ranking.passages), grounded=is_stated)


def fitted(steps: Steps, state: QuestionState, passages: list[Passage]) -> list[Passage]:
    """The passages, in rank order, that a read has time for: while the read's forecast (its new prompt
    characters at the reader's measured pace, and its longest reply) fits the answer's seconds left. The
    first passage always: a bound it cannot fit is one no read can. On these 2 cores a first read of five
    Wikipedia paragraphs computed up to 1,478 prompt tokens and took 36.6 s alone (find_scoreboard_end.json)."""
    pace = steps.pace
    if state.trace.budget is None or pace is None:
        return passages
    room = pace.prompt_chars(state.trace.budget.seconds_left(state.trace), steps.max_new_tokens) - len(state.question)
    kept: list[Passage] = []
    for passage in passages:
        room -= len(reading_line(passage)) + 1
        if kept and room < 0:
            break
        kept.append(passage)
    return kept


def rounds(steps: Steps, state: QuestionState) -> SearchRound:
    """Search rounds, each retried after an enrichment when it was not enough. The answer is the
    round that read best."""
    best = before = SearchRound()
    grounding = grounding_of(state.analysis) if steps.config.grow == "unstated" else None
    for round_ in range(steps.config.max_enrich_rounds + 1):
        found = search_round(steps, state, state.analysis, round_=round_, before=before, grounding=grounding, whole=grounding is not None)
        decision = steps.decide(state, found, round_)
        if found.perplexity < best.perplexity or best.sufficiency is None:
            best = found  # an enrichment round keeps its answer only when it reads better
        if decision != ENRICH or steps.queue(state, state.question, found) or not steps.enrich_graph(state, state.question, found).grew:
            break
        before = found
    return best


def search_round(
    steps: Steps,
    state: QuestionState,
    analysis: QueryAnalysis,
    round_: int,
    before: SearchRound,
    choice: ContextChoice | None = None,
    grounding: Callable[[Sufficiency], bool] | None = None,
    whole: bool = False,
) -> SearchRound:
    """Search -> choose -> read, one passage wider each iteration, until more context stops helping.
    A round after an enrichment (`before`: the round it retries) first reads what the enrichment
    surfaced, when it surfaced any. With `grounding` (a hop), a read whose answer what it read does not
    state is not sure, and a round without a grounded read reads once more, one passage wider; a hop that
    reads its passages alone stops at the first grounded read (perplexities over different single
    passages do not rank them: a distractor read alone is often read as surely). A `whole` read checked
    by `grounding` (`agent.grow: unstated`) stops at its first read that states its answer and reads no
    more than `max_iterations`."""
    question, choice = analysis.question, choice or steps.choice
    ranking, hits = _search(steps, state, analysis, round_=round_, choice=choice)
    surfaced = _surfaced(before, ranking)
    chooser: ContextRound | None = None
    if surfaced:
        chooser = SurfacedRound([e for e in before.evidence if isinstance(e, Passage)], surfaced, ranking)
    found, sub = SearchRound(), Subgraph()
    history: list[Sufficiency] = []
    iterations, retried = steps.config.max_iterations, grounding is None or whole
    iteration = 0
    while iteration < iterations:
        with state.trace.step(StepKind.ENRICH_CONTEXT, query=question, budget=choice.evidence.k + iteration, round=round_) as step:
            chooser = chooser or choice.round(analysis, ranking, hits())
            wider = chooser.at(iteration, sub)
            step.record = context_built(wider, chooser.record if iteration == 0 else None, surfaced)
        if iteration and wider.evidence == sub.evidence:
            break  # the tree has nothing more to give
        sub = wider
        result, is_grounded, stop = steps.check_sufficiency(
            state, question, sub, iteration=iteration, history=history, grounding=grounding, alone=choice.alone or whole
        )
        read = SearchRound(result, sub, tuple(ranking.passages) if ranking else (), grounded=is_grounded)
        if read.better_than(found):
            found = read
        iteration += 1
        if (stop or iteration == iterations) and not found.grounded and not retried:
            iterations, retried, stop = iteration + 1, True, None  # an ungrounded hop: one read more
        if stop:
            break
    return found


def _search(
    steps: Steps, state: QuestionState, analysis: QueryAnalysis, round_: int, choice: ContextChoice
) -> tuple[GraphRanking | None, Callable[[], list[Passage]]]:
    """The round's corpus search, done once and only when used (a surfaced retry of a list strategy
    needs none), and GraphRank over it when the strategy reads the graph."""
    if round_ == 0 and analysis is state.analysis and state.searched and choice.reads_graph:
        ranking, found = state.searched  # the first read searched and ranked this question already
        return ranking, lambda: found
    hits = functools.cache(lambda: steps.retriever.search(analysis.question))
    if not choice.reads_graph:
        return None, hits
    with state.trace.step(StepKind.GRAPH_RANK, query=analysis.question, round=round_) as step:
        ranking = steps.retriever.rank(analysis, hits())
        step.record = Ranked.of(ranking)
    return ranking, hits


def _surfaced(before: SearchRound, ranking: GraphRanking | None) -> list[Passage]:
    """PageRank's top passages that were neither in its top nor read in the round before: where the
    new facts pointed. A fresh selection rarely picks them (it scores the corpus as before)."""
    if before.sufficiency is None or ranking is None:
        return []
    seen = {p.id for p in before.ranked[:SURFACED_TOP]} | {e.id for e in before.evidence if isinstance(e, Passage)}
    return [p for p in ranking.passages[:SURFACED_TOP] if p.id not in seen]
