"""The per-question agent loop, top to bottom:

    for each enrichment round (0 .. max_enrich_rounds):
        repeat: EnrichContext (wider each time) -> CheckSufficiency
                until perplexity is under the threshold, stops improving, or the iteration cap
        AnalyzeDecide: under the threshold -> answer; else EnrichGraph -> retry
    answer = the last round's lowest-perplexity hypothetical answer, with the facts behind it as citations
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.agent.enrich_context import Fact, Subgraph, enrich_context
from enrich_rag.agent.enrich_graph import enrich_graph
from enrich_rag.agent.resources import Resources
from enrich_rag.agent.sufficiency import ANSWER, Sufficiency, analyze_decide, check_sufficiency, converged
from enrich_rag.agent.trace import Trace
from enrich_rag.build.corpus import chunks_by_ids
from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.evidence.query_analysis import QueryAnalysis, analyze_query
from enrich_rag.evidence.select import chunk_candidate, select_evidence
from enrich_rag.errors import EnrichRagError

MAX_QUESTION_CHARS = 2000
PASSAGE = "passage"  # relation of a Fact that stands for a whole selected passage


class QueryError(EnrichRagError):
    pass


@dataclass
class Citation:
    chunk_id: str
    doc_id: str
    evidence: str
    triple: str
    partition: str


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
            "sufficient": self.sufficient, "citations": [c.__dict__ for c in self.citations],
            "subgraph": self.subgraph, "trace": self.trace.to_dict(),
        }


def validate_question(question: str) -> str:
    if not isinstance(question, str) or not question.strip():
        raise QueryError("question is empty")
    if "\x00" in question:
        raise QueryError("question contains binary data (NUL bytes)")
    if len(question) > MAX_QUESTION_CHARS:
        raise QueryError(f"question is {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
    return " ".join(question.split())


def _subgraph_json(sub: Subgraph) -> dict[str, Any]:
    """The PCST subgraph behind the answer (the citations may be whole passages chosen entity-first)."""
    return {"nodes": sub.nodes, "edges": [f.__dict__ for f in sub.facts], "entry_ids": sub.entry_ids}


def passage_facts(chunks: list[dict[str, Any]]) -> list[Fact]:
    """Selected passages in the shape of facts, so sufficiency, citations and the trace treat both alike."""
    return [Fact("", c["title"], PASSAGE, "", c["content"], c["id"], c["doc_id"], c.get("partition", ""), float(c.get("score", 0.0)))
            for c in chunks]


class Agent:
    def __init__(self, resources: Resources, config: AgentConfig | None = None, evidence: EvidenceConfig | None = None):
        self.resources = resources
        self.config = config or resources.config.agent
        self.evidence = evidence or resources.config.evidence

    def select_passages(self, analysis: QueryAnalysis, sub: Subgraph) -> tuple[list[Fact], dict[str, Any]]:
        # The PCST subgraph's supporting chunks join the candidate pool: graph-backed evidence.
        graph_chunks = list(dict.fromkeys(f.chunk_id for f in sub.evidence(self.config.context_facts)))
        extra = [chunk_candidate(row, 0.0) for row in chunks_by_ids(self.resources.config.paths.chunks, graph_chunks)]
        selection = select_evidence(analysis, self.resources.retrieval(), self.evidence,
                                    self.resources.reranker(self.evidence), self.resources.nlp, extra)
        return passage_facts(selection.chunks), selection.record

    def answer(self, question: str, allow_enrich: bool | None = None) -> Answer:
        question = validate_question(question)
        allow = self.config.allow_enrich if allow_enrich is None else allow_enrich
        trace = Trace(question)
        start = time.perf_counter()
        analysis = None
        if self.evidence.entity_first:
            with trace.step("AnalyzeQuery", query=question) as step:
                analysis = analyze_query(question, self.resources.nlp, self.resources.store)
                step.outputs = analysis.to_dict()
        best: Sufficiency | None = None
        best_sub = Subgraph()
        sufficient = False
        for round_ in range(self.config.max_enrich_rounds + 1):
            best, best_sub = None, Subgraph()  # decide on this round's evidence, which includes all earlier facts
            history: list[Sufficiency] = []
            previous_facts: list[str] | None = None
            for iteration in range(self.config.max_iterations):
                k = self.config.entry_points * (iteration + 1)
                with trace.step("EnrichContext", query=question, entry_points=k, round=round_) as step:
                    sub = enrich_context(question, self.resources.store, self.resources.graph_index, self.config,
                                         self.resources.config.embeddings, k)
                    facts = sub.evidence(self.config.context_facts)
                    if analysis is not None:
                        facts, selection = self.select_passages(analysis, sub)
                        step.outputs["selection"] = selection
                    step.outputs |= {"entry_points": len(sub.entry_ids), "candidates": list(sub.candidates),
                                    "subgraph_nodes": len(sub.nodes), "facts": len(facts),
                                    "chunk_ids": sorted({f.chunk_id for f in facts})}
                evidence = [f.evidence for f in facts]
                if evidence == previous_facts:
                    break  # a wider search found nothing new
                previous_facts = evidence
                with trace.step("CheckSufficiency", facts=len(facts), iteration=iteration) as step:
                    result = check_sufficiency(self.resources.llm, question, facts, self.resources.config.llm.max_new_tokens)
                    history.append(result)
                    step.outputs = {"answer": result.answer, "perplexity": round(result.perplexity, 4)}
                if best is None or result.perplexity < best.perplexity:
                    best, best_sub = result, sub
                if result.perplexity < self.config.ppl_threshold:
                    step.outputs["reason"] = "under_threshold"
                    break
                if converged(history, self.config.min_gain):
                    step.outputs["reason"] = "converged"
                    break
            ppl = best.perplexity if best else float("inf")
            with trace.step("AnalyzeDecide", perplexity=round(ppl, 4), threshold=self.config.ppl_threshold) as step:
                decision = analyze_decide(ppl, self.config.ppl_threshold)
                if decision == ANSWER:
                    sufficient = True
                elif not allow:
                    decision = "answer_unsure"
                    step.outputs["reason"] = "enrichment disabled"
                elif round_ == self.config.max_enrich_rounds:
                    decision = "answer_unsure"
                    step.outputs["reason"] = "max_enrich_rounds reached"
                step.outputs["decision"] = decision
            if decision != "enrich":
                break
            with trace.step("EnrichGraph", question=question) as step:
                enriched = enrich_graph(question, [f.evidence for f in (best.facts if best else ())], self.resources,
                                        self.config.enrich_chunks)
                step.outputs = {"expansion_query": enriched.expansion_query, "query_source": enriched.query_source,
                                "new_chunks": enriched.new_chunks, "partition": enriched.partition,
                                "nodes": enriched.nodes, "edges": enriched.edges, "indexed": enriched.indexed,
                                "dvc": enriched.dvc, "seconds": {k: round(v, 3) for k, v in enriched.seconds.items()}}
                if enriched.partition:
                    trace.partitions_written.append(enriched.partition)
            if not enriched.partition:
                step.outputs["reason"] = "no uncovered chunks found"
                break
        trace.seconds = round(time.perf_counter() - start, 4)
        facts = best.facts if best else ()
        citations = [Citation(f.chunk_id, f.doc_id, f.evidence,
                              f.subject if f.relation == PASSAGE else f"{f.subject} {f.relation} {f.object}", f.partition)
                     for f in facts]
        return Answer(question, best.answer if best else "", best.perplexity if best else float("inf"), sufficient,
                      citations, _subgraph_json(best_sub), trace)
