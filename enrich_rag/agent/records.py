"""What each tool of the loop did, as a small frozen record: the trace holds these, and every reader of a
trace (evaluation, server, stream, confidence features, benchmarks) reads their fields.

A record's `to_dict` is the wire shape the API sends (a step's `outputs`); a trace that came back over the
wire holds `Received` records, whose fields are that dict as it arrived.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from enrich_rag.agent.descriptions import BridgeSplit
from enrich_rag.agent.enrich_graph import EnrichResult
from enrich_rag.agent.hops import Hop
from enrich_rag.agent.learned import Recall
from enrich_rag.agent.plan import Plan
from enrich_rag.agent.sufficiency import Sufficiency, recorded
from enrich_rag.evidence.graph_rank import GraphRanking
from enrich_rag.evidence.query_analysis import QueryAnalysis
from enrich_rag.llm.comparison import Compared
from enrich_rag.storage.enrichment_jobs import EnrichmentJob
from enrich_rag.storage.schema import Edge


class Tool(StrEnum):
    """The loop's steps: the README diagram's four tools and the steps that find where to look."""

    ANALYZE_QUERY = "AnalyzeQuery"
    PLAN = "Plan"
    GRAPH_RANK = "GraphRank"
    ENRICH_CONTEXT = "EnrichContext"
    CHECK_SUFFICIENCY = "CheckSufficiency"
    ANALYZE_DECIDE = "AnalyzeDecide"
    ENRICH_GRAPH = "EnrichGraph"
    HOP = "Hop"
    ROUTE = "Route"
    BRIDGE = "Bridge"
    COMPARE = "Compare"
    CONFIDENCE = "Confidence"
    QUEUE_ENRICHMENT = "QueueEnrichment"
    RECALL = "Recall"
    LEARN = "Learn"


@dataclass(frozen=True)
class QueryAnalyzed:
    tool: ClassVar[Tool] = Tool.ANALYZE_QUERY
    analysis: QueryAnalysis

    def to_dict(self) -> dict[str, Any]:
        return self.analysis.to_dict()


@dataclass(frozen=True)
class Planned:
    tool: ClassVar[Tool] = Tool.PLAN
    plan: Plan

    def to_dict(self) -> dict[str, Any]:
        return self.plan.record()


@dataclass(frozen=True)
class Ranked:
    """GraphRank's walk, kept small: the neighbourhood it walked is not held past the round."""

    tool: ClassVar[Tool] = Tool.GRAPH_RANK
    wire: dict[str, Any] = field(repr=False)

    @classmethod
    def of(cls, ranking: GraphRanking) -> Ranked:
        return cls(ranking.record())

    @property
    def top_chunk_ids(self) -> list[str]:
        return [r["chunk_id"] for r in self.wire["pagerank_top"]]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.wire)


@dataclass(frozen=True)
class ContextBuilt:
    """EnrichContext: the tree (or list) the reader is handed this iteration."""

    tool: ClassVar[Tool] = Tool.ENRICH_CONTEXT
    entry_points: int
    candidates: tuple[int, int]
    subgraph_nodes: int
    facts: int
    passages: int
    fact_lines: int
    chunk_ids: tuple[str, ...]
    fact_ids: tuple[str, ...]
    selection: dict[str, Any] | None = None  # the entity-first selection behind it (its first iteration)
    surfaced: tuple[str, ...] | None = None  # a retried round: what the enrichment surfaced

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"selection": self.selection} if self.selection is not None else {}
        out |= {
            "entry_points": self.entry_points,
            "candidates": list(self.candidates),
            "subgraph_nodes": self.subgraph_nodes,
            "facts": self.facts,
            "passages": self.passages,
            "fact_lines": self.fact_lines,
            "chunk_ids": list(self.chunk_ids),
            "fact_ids": list(self.fact_ids),
        }
        return out | ({"surfaced": list(self.surfaced)} if self.surfaced is not None else {})


@dataclass(frozen=True)
class Read:
    """CheckSufficiency: one hypothetical answer and its perplexity. `grounded` is None outside a hop;
    `reused`: the same context was read before for the same question (no reader call)."""

    tool: ClassVar[Tool] = Tool.CHECK_SUFFICIENCY
    answer: str
    perplexity: float
    grounded: bool | None = None
    reason: str | None = None
    reused: bool = False

    @classmethod
    def of(cls, result: Sufficiency, **more: Any) -> Read:
        return cls(result.answer, result.perplexity, **more)

    def to_dict(self) -> dict[str, Any]:
        return (
            {"answer": self.answer, "perplexity": recorded(self.perplexity)}
            | ({"grounded": self.grounded} if self.grounded is not None else {})
            | ({"reason": self.reason} if self.reason else {})
            | ({"reused": True} if self.reused else {})
        )


@dataclass(frozen=True)
class Decided:
    tool: ClassVar[Tool] = Tool.ANALYZE_DECIDE
    decision: str
    reason: str | None = None
    confidence: float | None = None  # the corpus's fitted model's, where it decided

    def to_dict(self) -> dict[str, Any]:
        return (
            ({"reason": self.reason} if self.reason else {})
            | ({"confidence": self.confidence} if self.confidence is not None else {})
            | {"decision": self.decision}
        )


@dataclass(frozen=True)
class Enriched:
    tool: ClassVar[Tool] = Tool.ENRICH_GRAPH
    result: EnrichResult

    def to_dict(self) -> dict[str, Any]:
        return self.result.record()


@dataclass(frozen=True)
class Queued:
    """QueueEnrichment: the round an unsure answer would have waited for, queued to run after it."""

    tool: ClassVar[Tool] = Tool.QUEUE_ENRICHMENT
    job: EnrichmentJob

    def to_dict(self) -> dict[str, Any]:
        return {"job": self.job.id, "question": self.job.question, "candidates": len(self.job.candidates), "state": self.job.state}


@dataclass(frozen=True)
class Recalled:
    """Recall: a learned fact found for a (sub-)question before any search, and whether it was taken as
    learned (no reader call), read again from its passage, or not used (its passage no longer says it)."""

    tool: ClassVar[Tool] = Tool.RECALL
    recall: Recall
    use: str  # answered | read | gone (its passage was removed)

    def to_dict(self) -> dict[str, Any]:
        return {"use": self.use} | self.recall.record()


@dataclass(frozen=True)
class Learned:
    """Learn: the facts an answer's grounded reads teach, queued as one job or committed as one partition."""

    tool: ClassVar[Tool] = Tool.LEARN
    facts: tuple[Edge, ...]
    job: str | None = None
    partition: str | None = None

    def to_dict(self) -> dict[str, Any]:
        facts = [{"subject": f.subject, "question": f.relation, "answer": f.object, "chunk_id": f.chunk_id} for f in self.facts]
        return {"facts": facts, "job": self.job, "partition": self.partition}


@dataclass(frozen=True)
class HopAnswered:
    tool: ClassVar[Tool] = Tool.HOP
    hop: Hop

    def to_dict(self) -> dict[str, Any]:
        return self.hop.record()


@dataclass(frozen=True)
class Routed:
    """Route: whether the question gets a Plan call, and the cue that decided it."""

    tool: ClassVar[Tool] = Tool.ROUTE
    decision: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"decision": self.decision, "reason": self.reason}


@dataclass(frozen=True)
class Bridged:
    tool: ClassVar[Tool] = Tool.BRIDGE
    split: BridgeSplit
    whole_answer: str
    hop_answer: str
    goes_on: bool

    def to_dict(self) -> dict[str, Any]:
        return self.split.record() | {"whole_answer": self.whole_answer, "hop_answer": self.hop_answer, "goes_on": self.goes_on}


@dataclass(frozen=True)
class ComparedSides:
    tool: ClassVar[Tool] = Tool.COMPARE
    compared: Compared

    def to_dict(self) -> dict[str, Any]:
        return self.compared.record()


@dataclass(frozen=True)
class Confident:
    tool: ClassVar[Tool] = Tool.CONFIDENCE
    confidence: float
    sure_above: float
    features: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"confidence": self.confidence, "sure_above": self.sure_above, "features": dict(self.features)}


@dataclass(frozen=True)
class Received:
    """A step as a server sent it: its outputs as they came (no typed fields to read)."""

    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)


StepRecord = (
    QueryAnalyzed
    | Routed
    | Planned
    | Ranked
    | ContextBuilt
    | Read
    | Decided
    | Enriched
    | Queued
    | Recalled
    | Learned
    | HopAnswered
    | Bridged
    | ComparedSides
    | Confident
    | Received
)
