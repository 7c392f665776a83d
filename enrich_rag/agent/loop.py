"""The per-question agent loop, top to bottom:

    AnalyzeQuery (entities, kind)
    for each enrichment round (0 .. max_enrich_rounds):
        search round: GraphRank (personalized PageRank over entities and passages), then
                      EnrichContext (PCST subgraph, wider each time; entity-first selection over the
                      PageRank passages) -> CheckSufficiency
                      until perplexity is under the threshold, stops improving, or the iteration cap
        AnalyzeDecide: under the threshold -> answer; else EnrichGraph -> retry
    answer = the lowest-perplexity hypothetical answer of all rounds, with the evidence behind it as citations
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from enrich_rag.agent.enrich_context import Subgraph, enrich_context
from enrich_rag.agent.enrich_graph import EnrichResult, enrich_graph
from enrich_rag.agent.resources import Resources
from enrich_rag.agent.sufficiency import (ANSWER, ANSWER_UNSURE, CONVERGED, ENRICH, UNDER_THRESHOLD, Evidence,
                                          Sufficiency, analyze_decide, check_sufficiency, converged, evidence_text)
from enrich_rag.agent.trace import Trace
from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.errors import EnrichRagError
from enrich_rag.evidence.graph_rank import GraphRanking, rank_passages
from enrich_rag.evidence.query_analysis import QueryAnalysis, analyze_query
from enrich_rag.evidence.select import select_evidence
from enrich_rag.llm.models import ppl_threshold
from enrich_rag.storage.passages import Passage

MAX_QUESTION_CHARS = 2000
GAP_TOP = 5  # PageRank passages whose unextracted chunks count as a gap the graph can see (enrich_on_gaps)


class QueryError(EnrichRagError):
    pass


@dataclass
class Citation:
    chunk_id: str
    doc_id: str
    evidence: str
    triple: str  # the fact, or a passage's title
    partition: str

    @classmethod
    def of(cls, source: Evidence) -> "Citation":
        if isinstance(source, Passage):
            return cls(source.id, source.doc_id, source.content, source.title, source.partition)
        return cls(source.chunk_id, source.doc_id, source.evidence, source.triple, source.partition)


@dataclass
class Answer:
    question: str
    answer: str
    perplexity: float
    sufficient: bool
    citations: list[Citation]
    subgraph: dict[str, Any]
    trace: Trace = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question, "answer": self.answer, "perplexity": self.perplexity,
            "sufficient": self.sufficient, "citations": [asdict(c) for c in self.citations],
            "subgraph": self.subgraph, "trace": self.trace.to_dict(),
        }


@dataclass
class SearchRound:
    """The best hypothetical answer of one round and the subgraph it was read from."""

    best: Sufficiency | None = None
    subgraph: Subgraph = field(default_factory=Subgraph)
    ranked: tuple[Passage, ...] = ()  # the round's PageRank passages: what EnrichGraph reads first

    @property
    def perplexity(self) -> float:
        return self.best.perplexity if self.best else float("inf")

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        return self.best.evidence if self.best else ()


def validate_question(question: str) -> str:
    if not isinstance(question, str) or not question.strip():
        raise QueryError("question is empty")
    if "\x00" in question:
        raise QueryError("question contains binary data (NUL bytes)")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes reach Python as lone surrogates (argv, files read with errors)
        raise QueryError("question is not valid UTF-8 text") from None
    if len(question) > MAX_QUESTION_CHARS:
        raise QueryError(f"question is {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
    return " ".join(question.split())


def _context_record(sub: Subgraph, evidence: list[Evidence], selection: dict[str, Any] | None) -> dict[str, Any]:
    record = {"selection": selection} if selection is not None else {}
    chunk_ids = {e.id if isinstance(e, Passage) else e.chunk_id for e in evidence}
    return record | {"entry_points": len(sub.entry_ids), "candidates": list(sub.candidates), "subgraph_nodes": len(sub.nodes),
                     "facts": len(evidence), "chunk_ids": sorted(chunk_ids)}


class Agent:
    def __init__(self, resources: Resources, config: AgentConfig | None = None, evidence: EvidenceConfig | None = None):
        self.resources = resources
        self.config = config or resources.config.agent
        self.evidence = evidence or resources.config.evidence
        self.embeddings = resources.config.embeddings
        self.max_new_tokens = resources.config.llm.max_new_tokens
        self.ppl_threshold = ppl_threshold(self.config, resources.config.llm)  # calibrated per model

    def answer(self, question: str, allow_enrich: bool | None = None,
               should_stop: Callable[[], str | None] | None = None) -> Answer:
        """`should_stop` is asked before every tool (a time limit, a client gone); a reason raises QueryStopped."""
        question = validate_question(question)
        allow = self.config.allow_enrich if allow_enrich is None else allow_enrich
        trace = Trace(question, should_stop=should_stop)
        start = time.perf_counter()
        analysis = self._analyze(question, trace)
        best = SearchRound()
        for round_ in range(self.config.max_enrich_rounds + 1):
            found = self._search_round(question, analysis, round_, trace)
            decision = self._decide(found, allow, round_, trace)
            if found.perplexity < best.perplexity or best.best is None:
                best = found  # an enrichment round keeps its answer only when it reads better
            if decision != ENRICH or not self._enrich(question, found, trace).partition:
                break
        trace.seconds = round(time.perf_counter() - start, 4)
        return Answer(question, best.best.answer if best.best else "", best.perplexity, best.perplexity < self.ppl_threshold,
                      [Citation.of(e) for e in best.evidence], best.subgraph.to_dict(), trace)

    def _analyze(self, question: str, trace: Trace) -> QueryAnalysis:
        with trace.step("AnalyzeQuery", query=question) as step:
            analysis = analyze_query(question, self.resources.nlp, self.resources.store)
            step.outputs = analysis.to_dict()
        return analysis

    def rank(self, question: str, analysis: QueryAnalysis) -> GraphRanking:
        resources = self.resources
        return rank_passages(question, store=resources.store, graph_index=resources.graph_index,
                             corpus=resources.retrieval().corpus, passages=resources.passages,
                             config=resources.config.retrieval, embeddings=self.embeddings,
                             query_entities=analysis.entities, limit=max(self.evidence.candidates, self.evidence.k))

    def _search_round(self, question: str, analysis: QueryAnalysis, round_: int, trace: Trace) -> SearchRound:
        """GraphRank once, then EnrichContext, wider each iteration, and CheckSufficiency, until more
        context stops helping."""
        found = SearchRound()
        history: list[Sufficiency] = []
        previous: list[str] | None = None
        ranking = None
        if self.evidence.graph or not self.evidence.entity_first:
            with trace.step("GraphRank", query=question, round=round_) as step:
                ranking = self.rank(question, analysis)
                step.outputs = ranking.record()
        # Entity-first evidence does not widen with the entry points: a second iteration would only
        # repeat the selection (and its searches) to find the same passages.
        iterations = 1 if self.evidence.entity_first else self.config.max_iterations
        for iteration in range(iterations):
            k = self.config.entry_points * (iteration + 1)
            with trace.step("EnrichContext", query=question, entry_points=k, round=round_) as step:
                sub, evidence, selection = self._context(question, analysis, iteration, ranking)
                step.outputs = _context_record(sub, evidence, selection)
            texts = [evidence_text(e) for e in evidence]
            if texts == previous:
                break  # a wider search found nothing new
            previous = texts
            with trace.step("CheckSufficiency", facts=len(evidence), iteration=iteration) as step:
                result = check_sufficiency(self.resources.llm, question, evidence, self.max_new_tokens)
                history.append(result)
                stop = self._stop_reason(result, history)
                step.outputs = result.record() | ({"reason": stop} if stop else {})
            if found.best is None or result.perplexity < found.best.perplexity:
                found = SearchRound(result, sub, tuple(ranking.passages) if ranking else ())
            if stop:
                break
        return found

    def _context(self, question: str, analysis: QueryAnalysis, iteration: int,
                 ranking: GraphRanking | None) -> tuple[Subgraph, list[Evidence], dict | None]:
        """Each iteration widens the PCST entry points and, for the pure graph retriever, PageRank's passages."""
        sub = enrich_context(question, self.resources.store, self.resources.graph_index, self.config, self.embeddings,
                             self.config.entry_points * (iteration + 1), ranking.entities if ranking else None)
        if not self.evidence.entity_first:
            return sub, list(ranking.passages[: self.evidence.k * (iteration + 1)]) if ranking else [], None
        passages, record = self.select_passages(analysis, ranking.passages if ranking else ())
        return sub, list(passages), record

    def _stop_reason(self, result: Sufficiency, history: list[Sufficiency]) -> str | None:
        if result.perplexity < self.ppl_threshold:
            return UNDER_THRESHOLD
        if converged(history, self.config.min_gain):
            return CONVERGED
        return None

    def select_passages(self, analysis: QueryAnalysis, graph_passages: Sequence[Passage]) -> tuple[list[Passage], dict[str, Any]]:
        """Entity-first selection; the graph's PageRank passages join its candidate pool."""
        retrieval = self.resources.retrieval()
        if not self.evidence.graph:
            retrieval = dataclasses.replace(retrieval, graph=None)
        selection = select_evidence(analysis, retrieval, self.evidence, self.resources.reranker(self.evidence),
                                    self.resources.nlp, graph_passages)
        return selection.passages, selection.record

    def _decide(self, found: SearchRound, allow: bool, round_: int, trace: Trace) -> str:
        with trace.step("AnalyzeDecide", perplexity=round(found.perplexity, 4), threshold=self.ppl_threshold) as step:
            decision = analyze_decide(found.perplexity, self.ppl_threshold)
            reason = None
            if decision == ANSWER and allow and self.config.enrich_on_gaps and round_ < self.config.max_enrich_rounds:
                unread = self._unread(found.ranked[:GAP_TOP])
                if unread:
                    decision, reason = ENRICH, f"{len(unread)} unextracted passages in the graph's top {GAP_TOP}"
            if decision == ENRICH and not allow:
                decision, reason = ANSWER_UNSURE, "enrichment disabled"
            elif decision == ENRICH and round_ == self.config.max_enrich_rounds:
                decision, reason = ANSWER_UNSURE, "max_enrich_rounds reached"
            step.outputs = ({"reason": reason} if reason else {}) | {"decision": decision}
        return decision

    def _unread(self, passages: Sequence[Passage]) -> list[str]:
        covered = self.resources.store.covered_chunks([p.id for p in passages])
        return [p.id for p in passages if p.id not in covered]

    def enrich(self, question: str, facts: list[str], candidates: Sequence[Passage] = ()) -> EnrichResult:
        """One EnrichGraph round with this agent's pieces (also `enrich-rag enrich`)."""
        resources = self.resources
        return enrich_graph(question, facts, corpus=resources.retrieval().corpus, store=resources.store,
                            extractor=lambda: resources.extractor, writer=resources.writer,
                            llm=resources.llm if self.config.expansion == "llm" else None,
                            limit_chunks=self.config.enrich_chunks, candidates=candidates)

    def _enrich(self, question: str, found: SearchRound, trace: Trace) -> EnrichResult:
        with trace.step("EnrichGraph", question=question) as step:
            passages = [e for e in found.evidence if isinstance(e, Passage)]
            enriched = self.enrich(question, [evidence_text(e) for e in found.evidence], [*passages, *found.ranked])
            step.outputs = enriched.record()
            if enriched.partition:
                trace.partitions_written.append(enriched.partition)
        return enriched
