"""The loop's steps bound to one project and one configuration (`Steps`), and a question's state while
they run (`QuestionState`, with what one round of reading found).

Each step records itself in the trace: AnalyzeQuery, the design's tools 2-4 (CheckSufficiency, Analyze
& Decide, EnrichGraph now or queued) and the answer's confidence. Tool 1, EnrichContext, is the context
strategy (`choice`, evidence/context_choice.py); one read of the question is agent/whole_read.py, a
plan's hops agent/chain.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.agent.confidence import WrongAnswerModel, confidence_file, confidence_summary, features_of, load_wrong_answer_model
from enrich_rag.agent.enrich_graph import EnrichResult, Jobs, already_read, deep_extractor
from enrich_rag.agent.sufficiency import (
    ANSWER,
    ANSWER_UNSURE,
    CONVERGED,
    ENRICH,
    GROUNDED,
    UNDER_THRESHOLD,
    Sufficiency,
    analyze_decide,
    check_sufficiency,
    converged,
    recorded,
)
from enrich_rag.agent.trace import (
    BudgetSpent,
    ComparedSides,
    Confident,
    ContextBuilt,
    Decided,
    Enriched,
    QueryAnalyzed,
    Queued,
    Read,
    StepKind,
    Trace,
)
from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.evidence.citations import citations
from enrich_rag.evidence.context_choice import ContextChoice, context_choice, hop_choice
from enrich_rag.evidence.enrich_context import Subgraph
from enrich_rag.evidence.graph_rank import GraphRanking
from enrich_rag.evidence.lines import Evidence, evidence_text, reading_line
from enrich_rag.evidence.query_analysis import QueryAnalysis, analyze_query
from enrich_rag.evidence.retriever import Retriever
from enrich_rag.llm.base import Pace
from enrich_rag.llm.comparison import compare, parse_comparison
from enrich_rag.llm.models import model_name, ppl_threshold
from enrich_rag.llm.reader import always
from enrich_rag.resources import Resources
from enrich_rag.storage.passages import Passage


@dataclass
class QuestionState:
    """What every step of the loop is handed for one question, instead of the trace, the read cache and
    the time limit passed one by one."""

    analysis: QueryAnalysis
    trace: Trace
    allow_enrich: bool
    enrich_later: bool = False  # an enrichment is queued to run after the answer, not waited for
    time_for_enrichment: Callable[[], bool] | None = None
    recalled: bool = False  # the question itself was answered from a learned fact
    searched: tuple[GraphRanking, list[Passage]] | None = None  # the first read's search and GraphRank, reused by round 0
    # Every (question, context) read so far, by its lines: greedy decoding of the same prompt gives the same answer.
    done: dict[tuple[str, ...], Sufficiency] = field(default_factory=dict)
    best: SearchRound | None = None  # the best read of the whole question so far: the answer when the budget is spent

    @property
    def question(self) -> str:
        return self.analysis.question

    def keep_if_best(self, read: SearchRound) -> None:
        if self.best is None or read.better_than(self.best):
            self.best = read

    def has_time_to_enrich(self) -> bool:
        """A queued round costs the answer nothing; one waited for must fit the request's time limit."""
        return self.enrich_later or self.time_for_enrichment is None or self.time_for_enrichment()


@dataclass
class SearchRound:
    """The best hypothetical answer of one round and the subgraph it was read from."""

    sufficiency: Sufficiency | None = None  # the reader's answer, its perplexity and what it read
    subgraph: Subgraph = field(default_factory=Subgraph)
    ranked: tuple[Passage, ...] = ()  # the round's PageRank passages: what EnrichGraph reads first
    grounded: bool = True  # a hop's read: what it read states its answer
    searched: bool = False  # the search's first read, which states its answer (no bridge check reads past it)

    def better_than(self, other: SearchRound) -> bool:
        """A grounded read beats an ungrounded one; then the lower perplexity."""
        return other.sufficiency is None or (self.grounded, -self.perplexity) > (other.grounded, -other.perplexity)

    @property
    def answer(self) -> str:
        return self.sufficiency.answer if self.sufficiency else ""

    @property
    def perplexity(self) -> float:
        return self.sufficiency.perplexity if self.sufficiency else float("inf")

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        return self.sufficiency.evidence if self.sufficiency else ()


def context_built(sub: Subgraph, selection: dict[str, Any] | None, surfaced: Sequence[Passage]) -> ContextBuilt:
    return ContextBuilt(
        entry_points=len(sub.entry_ids),
        candidates=(sub.candidates[0], sub.candidates[1]),
        subgraph_nodes=len(sub.nodes),
        facts=len(sub.evidence),
        passages=len(sub.passages),
        fact_lines=len(sub.facts),
        chunk_ids=tuple(p.id for p in sub.passages),
        fact_ids=tuple(f.id for f in sub.facts),
        selection=selection,
        surfaced=tuple(p.id for p in surfaced) if surfaced else None,
    )


GAP_TOP = 5  # PageRank passages whose unextracted chunks count as a gap the graph can see (enrich_on_gaps)
NO_TIME = "no time left to enrich within the request's limit"


@dataclass(frozen=True)
class Steps:
    resources: Resources
    config: AgentConfig
    evidence: EvidenceConfig
    retriever: Retriever
    jobs: Jobs
    threshold: float  # the perplexity under which a read counts as sure, calibrated per model
    wrong_answers: WrongAnswerModel | None  # P(wrong) fitted on this corpus for this reader (None: perplexity decides)
    choice: ContextChoice  # EnrichContext's strategy for a question read whole (`evidence.selection`)
    hop_choice: ContextChoice  # and for a plan's single-hop questions: one passage first (`evidence.hop_k`)

    @classmethod
    def of(cls, resources: Resources, config: AgentConfig, evidence: EvidenceConfig) -> Steps:
        retriever = Retriever(resources, evidence)
        llm = resources.config.llm
        return cls(
            resources,
            config,
            evidence,
            retriever,
            Jobs(resources, config),
            ppl_threshold(config, llm),
            load_wrong_answer_model(confidence_file(resources.config.paths.root), model_name(llm)),
            context_choice(config, evidence, retriever.select),
            hop_choice(config, evidence, retriever.select),
        )

    @property
    def max_new_tokens(self) -> int:
        return self.resources.config.llm.max_new_tokens

    def analyze(self, question: str, trace: Trace) -> QueryAnalysis:
        with trace.step(StepKind.ANALYZE_QUERY, query=question) as step:
            analysis = analyze_query(question, self.resources.nlp, self.resources.store)
            step.record = QueryAnalyzed(analysis)
        return analysis

    def check_sufficiency(
        self,
        state: QuestionState,
        question: str,
        sub: Subgraph,
        iteration: int,
        history: list[Sufficiency],
        grounding: Callable[[Sufficiency], bool] | None = None,
        alone: bool = False,
    ) -> tuple[Sufficiency, bool, str | None]:
        """The reader's hypothetical answer over this context, whether what it read states that answer
        (always, without `grounding`), and whether to stop. A context read before for the same question
        is not read again: greedy decoding of the same prompt gives the same answer."""
        done = state.done
        key = (question, *(reading_line(e) for e in sub.evidence))  # a hop asks its own question of a passage read before
        if key not in done:
            self._fits_in_time(state, key)
        with state.trace.step(StepKind.CHECK_SUFFICIENCY, facts=len(sub.evidence), iteration=iteration) as step:
            reused = key in done
            if not reused:
                done[key] = check_sufficiency(
                    self.resources.llm, question, sub.evidence, self.max_new_tokens, again_fits=self._again_fits(state)
                )
            result = done[key]
            history.append(result)
            is_grounded = grounding is None or grounding(result)
            stop = self._stop_reason(result, history, is_grounded, alone=alone)
            step.record = Read.of(result, grounded=is_grounded if grounding else None, reason=stop, reused=reused)
        if question == state.question:  # a hop's read answers its sub-question, not the question
            state.keep_if_best(SearchRound(result, sub, (), grounded=is_grounded))
        return result, is_grounded, stop

    @property
    def pace(self) -> Pace | None:
        """The reader's measured pace, where its backend times its calls (llama.cpp)."""
        return getattr(self.resources.llm, "pace", None)

    def _fits_in_time(self, state: QuestionState, *reads: tuple[str, ...]) -> None:
        """Raise BudgetSpent where the question has a read to answer with and these reads (a question and
        its lines each), at the reader's pace, would end past the answer's seconds: a wider round computes
        more than the calls before it (on Click the longest-call forecast let a fourth read end an answer
        at 31.0 s of 25), and a comparison reads its two sides in one step (HotpotQA: 19.9 and 22.3 s
        where one read was forecast). The reader's prompt cache holds its last prompt, so a read that
        extends the last one computes only the rest."""
        budget, pace = state.trace.budget, self.pace
        if budget is None or pace is None or state.best is None:
            return
        forecast, last = 0.0, next(reversed(state.done), ())
        for key in reads:
            shared = next((i for i, (a, b) in enumerate(zip(last, key, strict=False)) if a != b), min(len(last), len(key)))
            forecast += pace.call_s(sum(len(part) + 1 for part in key[shared:]), self.max_new_tokens)
            last = key
        if reason := budget.past_seconds(state.trace, forecast, "a read" if len(reads) == 1 else f"{len(reads)} reads"):
            raise BudgetSpent(reason)

    def _again_fits(self, state: QuestionState) -> Callable[[int], bool]:
        """Whether a read asked again without its worked examples (llm/reader.py), computing that many
        prompt characters anew, fits the answer's seconds: on HotpotQA dev one such read doubled an
        answer to 35 s."""
        budget, pace = state.trace.budget, self.pace
        if budget is None or pace is None:
            return always
        return lambda chars: budget.past_seconds(state.trace, pace.call_s(chars, self.max_new_tokens), "a read asked again") is None

    def _stop_reason(self, result: Sufficiency, history: list[Sufficiency], is_grounded: bool, alone: bool) -> str | None:
        """A read sure of an answer it did not read is not enough (one passage more). Reading alone, the
        first grounded read ends the hop, and perplexities of different passages are not a trend."""
        if is_grounded and alone:
            return GROUNDED
        if result.perplexity < self.threshold:
            return UNDER_THRESHOLD if is_grounded else None
        if not is_grounded and alone:
            return None
        return CONVERGED if converged(history, self.config.min_perplexity_gain) else None

    def decide(self, state: QuestionState, found: SearchRound, round_: int) -> str:
        """Answer or enrich. With the corpus's fitted model, an answer the model is sure of is answered and
        one it is unsure of is enriched: perplexity alone fired on nearly every question and barely told
        right from wrong. Without a model, the perplexity threshold decides."""
        allow = state.allow_enrich
        with state.trace.step(StepKind.ANALYZE_DECIDE, perplexity=recorded(found.perplexity), threshold=self.threshold) as step:
            decision = analyze_decide(found.perplexity, self.threshold)
            reason: str | None = None
            judged: float | None = None
            if self.wrong_answers is not None and found.sufficiency is not None:
                confidence, _ = self._confidence_of(self.wrong_answers, state, found.sufficiency.answer, read=found, chain=[])
                sure = confidence >= self.config.sure_confidence
                decision, judged = (ANSWER if sure else ENRICH), confidence
                reason = f"confidence {confidence:.2f} {'at least' if sure else 'under'} {self.config.sure_confidence}"
            if decision == ANSWER and allow and self.config.enrich_on_gaps and round_ < self.config.max_enrich_rounds:
                unread = self._unread(found.ranked[:GAP_TOP])
                if unread:
                    decision, reason = ENRICH, f"{len(unread)} unextracted passages in the graph's top {GAP_TOP}"
            if decision == ENRICH and not allow:
                decision, reason = ANSWER_UNSURE, "enrichment disabled"
            elif decision == ENRICH and round_ == self.config.max_enrich_rounds:
                decision, reason = ANSWER_UNSURE, "max_enrich_rounds reached"
            elif decision == ENRICH and not state.has_time_to_enrich():
                decision, reason = ANSWER_UNSURE, NO_TIME
            step.record = Decided(decision, reason, judged)
        return decision

    def decide_hop(self, state: QuestionState, hop: int, found: SearchRound) -> str:
        """Analyze & Decide for a hop whose reads stated no answer: the gap is precise (this hop's fact), so
        it is enriched unless the request's time limit cannot hold a round."""
        with state.trace.step(StepKind.ANALYZE_DECIDE, hop=hop, perplexity=recorded(found.perplexity), grounded=False) as step:
            decision, reason = ENRICH, f"hop {hop}: no passage it read states its answer"
            if not state.has_time_to_enrich():
                decision, reason = ANSWER_UNSURE, NO_TIME
            step.record = Decided(decision, reason)
        return decision

    def _unread(self, passages: Sequence[Passage]) -> list[str]:
        covered = already_read(self.resources.store, [p.id for p in passages], deep_extractor(self.resources.config))
        return [p.id for p in passages if p.id not in covered]

    def confidence(self, state: QuestionState, text: str, read: SearchRound, chain: list[dict[str, Any]]) -> float | None:
        """1 - P(wrong) of the corpus's model over what the loop saw answering (None without a model)."""
        if self.wrong_answers is None:
            return None
        with state.trace.step(StepKind.CONFIDENCE, answer=text) as step:
            confidence, features = self._confidence_of(self.wrong_answers, state, text, read=read, chain=chain)
            step.record = Confident(confidence, self.config.sure_confidence, features)
        return confidence

    def _confidence_of(
        self, model: WrongAnswerModel, state: QuestionState, text: str, read: SearchRound, chain: list[dict[str, Any]]
    ) -> tuple[float, dict[str, float]]:
        """The features an evaluation's prediction row yields for the same answer (`confidence.features_of`)."""
        summary = confidence_summary(read.perplexity, state.trace, chain)
        chunk_ids = [c.chunk_id for c in citations(read.evidence)]
        texts = lambda ids: [p.content for p in self.resources.passages.by_ids(list(dict.fromkeys(ids)))]  # noqa: E731
        features = features_of(state.question, text, summary, chunk_ids=chunk_ids, chunk_texts=texts)
        return round(1.0 - model.probability(features), 4), features

    def compared(self, state: QuestionState, read: SearchRound) -> str:
        """The answer; a comparison of two dates is read again a side at a time (llm/comparison.py)."""
        text = read.answer
        if read.sufficiency and (comparison := parse_comparison(state.question)):
            lines = [reading_line(e) for e in read.evidence]
            # Each side is a read of its own question over the lines: nothing of it is in the prompt cache.
            sides = [(comparison.ask(side), *lines) for side in (comparison.a, comparison.b)]
            self._fits_in_time(state, *sides)
            with state.trace.step(StepKind.COMPARE, a=comparison.a, b=comparison.b) as step:
                compared = compare(self.resources.llm, comparison, lines, self.max_new_tokens, again_fits=self._again_fits(state))
                step.record = ComparedSides(compared)
            text = compared.answer or text
        return text

    def queue(self, state: QuestionState, question: str, found: SearchRound) -> bool:
        """With `enrich_later`, the round goes to the project's queue (True) and the answer does not wait."""
        if not state.enrich_later:
            return False
        with state.trace.step(StepKind.QUEUE_ENRICHMENT, question=question) as step:
            facts = [evidence_text(e) for e in found.evidence]
            job = self.resources.jobs.put(question, facts, list(dict.fromkeys(p.id for p in self._targets(found))))
            step.record = Queued(job)
        return True

    def enrich_graph(self, state: QuestionState, question: str, found: SearchRound) -> EnrichResult:
        """EnrichGraph now, the answer waiting for it."""
        with state.trace.step(StepKind.ENRICH_GRAPH, question=question) as step:
            enriched = self.jobs.enrich(question, [evidence_text(e) for e in found.evidence], self._targets(found))
            step.record = Enriched(enriched)
            if enriched.partition:
                state.trace.partitions_written.append(enriched.partition)
        return enriched

    def _targets(self, found: SearchRound) -> list[Passage]:
        """What EnrichGraph extracts first: the tree's passages, then PageRank's."""
        passages = [e for e in found.evidence if isinstance(e, Passage)]
        if self.config.enrich_targets == "beyond_context":  # the reader read these whole; their facts add nothing to its prompt
            read_alone = {p.id for p in passages}
            return [p for p in found.ranked if p.id not in read_alone]
        return [*passages, *found.ranked]
