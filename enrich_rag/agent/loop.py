"""The per-question loop. `STAGES` below is its order, stage by stage, with the steps each records and
where each can go next; the README's diagram is drawn from it (`python scripts/results_page.py`), and the
tests check that every step kind is drawn and that the loop's traces only take the drawn arrows."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from enrich_rag.agent.answer import BACKGROUND, NOT_FOUND, Answer, enrich_when
from enrich_rag.agent.chain import bridge, chain, plan, plans
from enrich_rag.agent.hops import Hop
from enrich_rag.agent.memory import learn, recalled, taught
from enrich_rag.agent.plan import ONE_HOP, one_hop
from enrich_rag.agent.steps import QuestionState, SearchRound, Steps
from enrich_rag.agent.stream import Hooks
from enrich_rag.agent.trace import BudgetSpent, Queued, ReaderBudget, StepKind, Trace
from enrich_rag.agent.whole_read import grounding_of, read_whole
from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.evidence.citations import citations
from enrich_rag.evidence.query_analysis import validate_question
from enrich_rag.evidence.quote import quote
from enrich_rag.resources import Resources


@dataclass(frozen=True)
class Stage:
    """One stage of the loop as the diagram draws it: the step kinds it records in the trace and the
    stages it can hand over to (a stage may repeat: rounds, iterations, hops)."""

    name: str
    does: str
    kinds: frozenset[StepKind]
    then: tuple[str, ...] = ()


_READING = frozenset({StepKind.GRAPH_RANK, StepKind.ENRICH_CONTEXT, StepKind.CHECK_SUFFICIENCY, StepKind.ANALYZE_DECIDE})
_GROWING = frozenset({StepKind.ENRICH_GRAPH, StepKind.QUEUE_ENRICHMENT})
_AFTER_READING = ("route", "plan", "bridge", "compare", "confidence", "learn")
STAGES = (
    Stage(
        "analyze",
        "the question's entities and kind",
        frozenset({StepKind.ANALYZE_QUERY}),
        then=("recall", "first read", "rounds", "route", "plan"),
    ),
    Stage(
        "recall",
        "a learned fact that asks the same answers it",
        frozenset({StepKind.RECALL, StepKind.CHECK_SUFFICIENCY}),
        then=("first read", "rounds", "route", "plan", "compare", "confidence", "learn"),
    ),
    Stage(
        "first read",
        "one search (the hybrid's first passages, GraphRank's walk below) -> its first passage (titled "
        "passages: and the page it names, but for a comparison) -> CheckSufficiency; a read that states its "
        "answer is the answer",
        _READING,
        then=("rounds", *_AFTER_READING),
    ),
    Stage(
        "rounds",
        "else GraphRank (neighbourhood off the Parquet via DuckDB, PageRank) -> EnrichContext (PCST = the "
        "context, a passage wider each time) -> CheckSufficiency (perplexity) -> Analyze & Decide -> EnrichGraph "
        "(deep extraction -> partition -> txtai upsert -> DVC commit -> again) or QueueEnrichment",
        _READING | _GROWING,
        then=_AFTER_READING,
    ),
    Stage(
        "route",
        "a comparison is read whole, with no plan (`agent.compare_in_one_read`)",
        frozenset({StepKind.ROUTE}),
        then=("first read", "rounds", "compare", "confidence", "learn"),
    ),
    Stage(
        "plan",
        "where the whole read did not state its answer: the reader writes single-hop sub-questions",
        frozenset({StepKind.PLAN}),
        then=("hops", "first read", "rounds", "compare", "confidence", "learn"),
    ),
    Stage(
        "hops",
        "each sub-question (#n filled) read on its own rounds; a chain answers with its last hop, side-by-"
        "side hops with one more read; a chain that does not state its answer gives way to the whole read",
        frozenset({StepKind.HOP, StepKind.RECALL}) | _READING | _GROWING,
        then=("compare", "confidence", "learn"),
    ),
    Stage(
        "bridge",
        "a description in a question kept whole is read as a hop; where it answers what the whole read did, the rest is read as hop 2",
        frozenset({StepKind.BRIDGE, StepKind.HOP, StepKind.RECALL}) | _READING,
        then=("compare", "confidence", "learn"),
    ),
    Stage(
        "compare",
        "two dates read again a side at a time",
        frozenset({StepKind.COMPARE}),
        then=("confidence", "learn"),
    ),
    Stage(
        "confidence",
        "1 - P(wrong) from a fitted model (else the perplexity rule) -> sure",
        frozenset({StepKind.CONFIDENCE}),
        then=("learn",),
    ),
    Stage(
        "learn",
        "grounded hops kept as learned facts, queued with the answer's enrichment",
        frozenset({StepKind.LEARN, StepKind.QUEUE_ENRICHMENT}),
    ),
)
ANSWERED = "The answer, its quote (the line that states it) and citations; past the reader budget, the best read so far, flagged `spent`"


def follows_stages(kinds: Sequence[str]) -> bool:
    """Whether a trace's steps, in the order they finished, take only the arrows `STAGES` draws."""
    by_name = {stage.name: stage for stage in STAGES}
    at = {"analyze"} if kinds and kinds[0] == StepKind.ANALYZE_QUERY else set()
    for kind in kinds[1:]:
        at = {n for name in at for n in (name, *by_name[name].then) if kind in by_name[n].kinds}
    return bool(at) or not kinds


class Agent:
    """The loop over one question; its tools are bound once, to the project and the configuration."""

    def __init__(self, resources: Resources, config: AgentConfig, evidence: EvidenceConfig):
        self.steps = Steps.of(resources, config, evidence)
        self.config, self.evidence = config, evidence
        self.retriever, self.jobs = self.steps.retriever, self.steps.jobs  # retrieval and writes without a question

    def answer(
        self,
        question: str,
        *,
        enrich: str | None = None,
        abstain: bool | None = None,
        hooks: Hooks | None = None,
    ) -> Answer:
        """One question through the loop.

        Args:
            question: the question, checked first (`QueryError` when it is empty, binary or too long).
            enrich: "never" never writes; "background" queues an unsure answer's enrichment to run after
                it; "now" waits for the round and reads again; None: `agent.enrich_when` where
                `agent.allow_enrich`.
            abstain: an answer still unsure says it was not found (None: `agent.abstain`).
            hooks: a caller's callbacks (`agent/stream.py`): `should_stop` is asked before every step (a
                reason raises QueryStopped); `time_for_enrichment` before an EnrichGraph round (False
                answers with what was read instead of starting a round the time limit cannot hold);
                `on_step` is told of each step as it finishes; past `answer_by` (monotonic) no reader call
                starts.

        Returns:
            The Answer. A question whose budget (`agent.max_reader_calls`, `max_answer_s`) or time
            runs out answers with its best read of the whole question so far, `Answer.spent` saying why:
            a bound a server can promise.
        """
        question = validate_question(question)
        hooks = hooks or Hooks()
        budget = ReaderBudget(self.config.max_reader_calls, self.config.max_answer_s, hooks.answer_by)
        trace = Trace(question, should_stop=hooks.should_stop, on_step=hooks.on_step, budget=budget)
        start = time.perf_counter()
        when = enrich_when(self.config, enrich)
        steps = self.steps
        state = QuestionState(
            steps.analyze(question, trace),
            trace,
            allow_enrich=when is not None,
            enrich_later=when == BACKGROUND,
            time_for_enrichment=hooks.time_for_enrichment,
        )
        spent = None
        try:
            hops, read = self._read_question(state)
        except BudgetSpent as reason:  # the best read of the whole question so far answers, flagged
            spent, hops, read = str(reason), [], state.best or SearchRound()
        text, spent = self._compared(state, read, spent)
        chain_record = [h.record() for h in hops]
        confidence = steps.confidence(state, text, read, chain=chain_record)
        sure = self._sure(confidence, read, hops)
        if (
            spent is None
            and when is not None
            and self.config.learn
            and (facts := taught(steps, state, hops, read=read, grounding=grounding_of(state.analysis)))
        ):
            learn(steps, state, when=when, facts=facts)
        line = quote(text, read.evidence, question)
        if not sure and (self.config.abstain if abstain is None else abstain):
            text, line = NOT_FOUND, None
        trace.seconds = round(time.perf_counter() - start, 4)
        return Answer(
            question=question,
            answer=text,
            perplexity=read.perplexity,
            sure=sure,
            citations=citations(read.evidence),
            subgraph=read.subgraph.to_dict(),
            trace=trace,
            threshold=steps.threshold,
            chain=chain_record,
            confidence=confidence,
            queued=[r.job.id for r in trace.records(Queued)],
            quote=line,
            spent=spent,
        )

    def _compared(self, state: QuestionState, read: SearchRound, spent: str | None) -> tuple[str, str | None]:
        """The answer text, a comparison's sides read again first (`Steps.compared`), and why the budget
        was spent: spent before that reading, the read's own answer stands."""
        if spent is not None:
            return read.answer, spent
        try:
            return self.steps.compared(state, read), None
        except BudgetSpent as reason:
            return read.answer, str(reason)

    def _read_question(self, state: QuestionState) -> tuple[list[Hop], SearchRound]:
        """A learned fact first; then plan first and read what the plan says (`agent.plan_when: always`),
        or read the question whole first and plan only when what that read does not state its answer: a
        read that found its answer is not paid for again, and a chain that does not ground gives way to
        the whole read."""
        steps = self.steps
        if learned := recalled(steps, state, state.analysis, grounding=grounding_of(state.analysis)):
            state.recalled = True
            return [], learned[0]
        if self.config.plan_when == "always" or not self.config.hops:
            made = plan(steps, state) if plans(steps, state) else one_hop(state.question)
            return self._whole(state) if made.kind == ONE_HOP else chain(steps, state, made)
        whole = read_whole(steps, state)
        by_statement = self.config.first_read or self.config.grow == "unstated"
        unsure = not whole.grounded if by_statement else whole.perplexity >= steps.threshold
        if not unsure or not plans(steps, state) or (made := plan(steps, state)).kind == ONE_HOP:
            return self._whole(state, whole)
        hops, chained = chain(steps, state, made)
        return (hops, chained) if chained.grounded else ([], whole)

    def _whole(self, state: QuestionState, read: SearchRound | None = None) -> tuple[list[Hop], SearchRound]:
        """The question read as one (`read`: already read); a question that names a thing by a description
        is then checked for a stop at that bridge (`agent.bridge_check`)."""
        read = read or read_whole(self.steps, state)
        if self.config.hops and self.config.bridge_check and not read.searched and (bridged := bridge(self.steps, state, read)):
            return bridged
        return [], read

    def _sure(self, confidence: float | None, read: SearchRound, hops: list[Hop]) -> bool:
        """The corpus's fitted confidence over `agent.sure_confidence`; without a model, a perplexity under
        the threshold over a read (and hops) that state the answer. A stating line alone called wrong
        answers sure on held-out docs (evidence/quote.py)."""
        if confidence is None:
            return read.perplexity < self.steps.threshold and read.grounded and all(h.grounded for h in hops)
        return confidence >= self.config.sure_confidence
