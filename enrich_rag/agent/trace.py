"""A question's steps as they ran: each step's kind, inputs, what it did (a small frozen record), seconds
and the partitions it wrote; and the reader budget that bounds them.

Every reader of a trace (evaluation, server, stream, confidence features, benchmarks) takes the records
of one kind (`trace.records(Read)`) and reads their fields. A record's `to_dict` is the wire shape the
API sends (a step's `outputs`); a trace that came back over the wire holds `Received` records, whose
fields are that dict as it arrived."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, TypeVar

from enrich_rag.agent.enrich_graph import EnrichResult
from enrich_rag.agent.hops import Hop
from enrich_rag.agent.plan import BridgeSplit, Plan
from enrich_rag.agent.sufficiency import Sufficiency, recorded
from enrich_rag.errors import EnrichRagError
from enrich_rag.evidence.graph_rank import GraphRanking
from enrich_rag.evidence.learned_facts import Recall
from enrich_rag.evidence.query_analysis import QueryAnalysis
from enrich_rag.llm.comparison import Compared
from enrich_rag.storage.enrichment_jobs import EnrichmentJob
from enrich_rag.storage.schema import Edge


class StepKind(StrEnum):
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
    kind: ClassVar[StepKind] = StepKind.ANALYZE_QUERY
    analysis: QueryAnalysis

    def to_dict(self) -> dict[str, Any]:
        return self.analysis.to_dict()


@dataclass(frozen=True)
class Planned:
    kind: ClassVar[StepKind] = StepKind.PLAN
    plan: Plan

    def to_dict(self) -> dict[str, Any]:
        return self.plan.record()


@dataclass(frozen=True)
class Ranked:
    """GraphRank's walk, kept small: the neighbourhood it walked is not held past the round."""

    kind: ClassVar[StepKind] = StepKind.GRAPH_RANK
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

    kind: ClassVar[StepKind] = StepKind.ENRICH_CONTEXT
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

    kind: ClassVar[StepKind] = StepKind.CHECK_SUFFICIENCY
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
    kind: ClassVar[StepKind] = StepKind.ANALYZE_DECIDE
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
    kind: ClassVar[StepKind] = StepKind.ENRICH_GRAPH
    result: EnrichResult

    def to_dict(self) -> dict[str, Any]:
        return self.result.record()


@dataclass(frozen=True)
class Queued:
    """QueueEnrichment: the round an unsure answer would have waited for, queued to run after it."""

    kind: ClassVar[StepKind] = StepKind.QUEUE_ENRICHMENT
    job: EnrichmentJob

    def to_dict(self) -> dict[str, Any]:
        return {"job": self.job.id, "question": self.job.question, "candidates": len(self.job.candidates), "state": self.job.state}


@dataclass(frozen=True)
class Recalled:
    """Recall: a learned fact found for a (sub-)question before any search, and whether it was taken as
    learned (no reader call), read again from its passage, or not used (its passage no longer says it)."""

    kind: ClassVar[StepKind] = StepKind.RECALL
    recall: Recall
    use: str  # answered | read | gone (its passage was removed)

    def to_dict(self) -> dict[str, Any]:
        return {"use": self.use} | self.recall.record()


@dataclass(frozen=True)
class Learned:
    """Learn: the facts an answer's grounded reads teach, queued as one job or committed as one partition."""

    kind: ClassVar[StepKind] = StepKind.LEARN
    facts: tuple[Edge, ...]
    job: str | None = None
    partition: str | None = None

    def to_dict(self) -> dict[str, Any]:
        facts = [{"subject": f.subject, "question": f.relation, "answer": f.object, "chunk_id": f.chunk_id} for f in self.facts]
        return {"facts": facts, "job": self.job, "partition": self.partition}


@dataclass(frozen=True)
class HopAnswered:
    kind: ClassVar[StepKind] = StepKind.HOP
    hop: Hop

    def to_dict(self) -> dict[str, Any]:
        return self.hop.record()


@dataclass(frozen=True)
class Routed:
    """Route: whether the question gets a Plan call, and the cue that decided it."""

    kind: ClassVar[StepKind] = StepKind.ROUTE
    decision: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"decision": self.decision, "reason": self.reason}


@dataclass(frozen=True)
class Bridged:
    kind: ClassVar[StepKind] = StepKind.BRIDGE
    split: BridgeSplit
    whole_answer: str
    hop_answer: str
    goes_on: bool

    def to_dict(self) -> dict[str, Any]:
        return self.split.record() | {"whole_answer": self.whole_answer, "hop_answer": self.hop_answer, "goes_on": self.goes_on}


@dataclass(frozen=True)
class ComparedSides:
    kind: ClassVar[StepKind] = StepKind.COMPARE
    compared: Compared

    def to_dict(self) -> dict[str, Any]:
        return self.compared.record()


@dataclass(frozen=True)
class Confident:
    kind: ClassVar[StepKind] = StepKind.CONFIDENCE
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


R = TypeVar("R")
_READER_STEPS = (StepKind.PLAN, StepKind.CHECK_SUFFICIENCY, StepKind.COMPARE)


class QueryStopped(EnrichRagError):
    """A question given up between two steps: over its time limit, or its client went away. Carries
    the steps run so far (what they cost tells the server how to plan the next question)."""

    def __init__(self, message: str, trace: Trace | None = None):
        super().__init__(message)
        self.trace = trace


class BudgetSpent(EnrichRagError):
    """A question's reader budget is spent: it answers with its best read so far (agent/loop.py)."""


# A later reader call starts only when its forecast, this much longer, fits: the same Click question's
# calls took 17-20 s in all alone and 27 s in a run (bench_results/time_limit_answers_after.json at 3361a79),
# where forecasts at the measured pace let two answers of 22 end 2-3 s past 25 s.
FORECAST_MARGIN = 1.25


@dataclass(frozen=True)
class ReaderBudget:
    """What one answer may spend: reader calls (`agent.max_reader_calls`) and seconds of its own work,
    every step counted from its start but an EnrichGraph round (`agent.max_answer_s`: a round is bounded
    apart, by the time limit it must fit), or up to a request's `answer_by`. A reader call starts only
    when the time it is forecast to take fits in what is left: the first read is cut to fit
    (`seconds_left`), a read is forecast from its new prompt characters (agent/steps.py), and any other
    call as the longest this answer has made."""

    calls: int
    seconds: float
    answer_by: float | None = None  # monotonic: a request's time limit less its margin (serve.answer_margin_s)
    started: float = field(default_factory=time.monotonic)

    def seconds_left(self, trace: Trace) -> float:
        now = time.monotonic()
        left = self.started + self.seconds + trace.seconds_in(StepKind.ENRICH_GRAPH) - now
        return left if self.answer_by is None else min(left, self.answer_by - now)

    def spent(self, trace: Trace) -> str | None:
        if self.answer_by is not None and time.monotonic() >= self.answer_by:
            return "the time limit is near"
        if (calls := trace.reader_calls()) >= self.calls:
            return f"{calls} of {self.calls} reader calls made"
        return self.past_seconds(trace, trace.longest_reader_call(), "a reader call")

    def past_seconds(self, trace: Trace, forecast: float, what: str) -> str | None:
        """Why `what`, forecast to take `forecast` seconds, must not start (None: it fits in what is left,
        with FORECAST_MARGIN for the forecast's error)."""
        if (left := self.seconds_left(trace)) > forecast * FORECAST_MARGIN:
            return None
        used = time.monotonic() - self.started - trace.seconds_in(StepKind.ENRICH_GRAPH)
        return f"{used:.1f} of {self.seconds:g} s spent, {max(left, 0.0):.1f} s left for {what} forecast at {forecast:.1f} s"


@dataclass
class Step:
    kind: StepKind | str  # sent as `tool` on the wire: the API's field name since the first release
    inputs: dict[str, Any]
    record: StepRecord | None = None  # set by the orchestrator once the step returns
    seconds: float = 0.0

    @property
    def outputs(self) -> dict[str, Any]:
        """The record as the API sends it."""
        return self.record.to_dict() if self.record is not None else {}

    def to_dict(self) -> dict[str, Any]:
        return {"tool": str(self.kind), "inputs": self.inputs, "outputs": self.outputs, "seconds": self.seconds}

    def summary(self) -> str:
        """The few outputs a person follows the question by (the CLI's table, the stream's step lines)."""
        return ", ".join(f"{k}={v}" for k, v in self.outputs.items() if k in _SUMMARY_KEYS)


@dataclass
class Trace:
    question: str
    steps: list[Step] = field(default_factory=list)
    partitions_written: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # Asked before every step; a reason stops the question there (steps themselves are never cut
    # in half, so an enrichment commit always finishes).
    should_stop: Callable[[], str | None] | None = field(default=None, repr=False, compare=False)
    # Told of each step as it finishes (a stream's step events).
    on_step: Callable[[Step], None] | None = field(default=None, repr=False, compare=False)
    # Asked before every reader call: a spent budget ends the reading there (BudgetSpent).
    budget: ReaderBudget | None = field(default=None, repr=False, compare=False)

    @contextmanager
    def step(self, kind: StepKind, **inputs: Any) -> Iterator[Step]:
        reason = self.should_stop() if self.should_stop else None
        if reason:
            raise QueryStopped(f"stopped before {kind}: {reason}", self)
        if kind in _READER_STEPS and self.budget is not None and (spent := self.budget.spent(self)):
            raise BudgetSpent(spent)
        step = Step(kind, inputs)
        start = time.perf_counter()
        finished = False
        try:
            yield step
            finished = True
        finally:
            step.seconds = round(time.perf_counter() - start, 4)
            self.steps.append(step)
            if finished and self.on_step is not None:  # a step that raised is the stream's error, not a step done
                self.on_step(step)

    def step_names(self) -> list[str]:
        return [str(s.kind) for s in self.steps]

    def records(self, kind: type[R]) -> list[R]:
        """Every record of one kind, in the order the loop made them."""
        return [s.record for s in self.steps if isinstance(s.record, kind)]

    def first(self, kind: type[R]) -> R | None:
        found = self.records(kind)
        return found[0] if found else None

    def reader_calls(self) -> int:
        """Calls of the reader while answering (a read of a context read before calls nothing; an
        enrichment's extraction calls are its job's, not counted here)."""
        return sum(s.kind in _READER_STEPS for s in self.steps) - sum(r.reused for r in self.records(Read))

    def seconds_in(self, kind: StepKind) -> float:
        return sum(s.seconds for s in self.steps if s.kind == kind)

    def longest_reader_call(self) -> float:
        """Seconds of the longest step that called the reader: the forecast of the next."""
        return max((s.seconds for s in self.steps if s.kind in _READER_STEPS), default=0.0)

    def enrichment_seconds(self) -> float | None:
        """What enriching cost this question: the first EnrichGraph and every step after it (the
        retried round that reads it). None when the question never enriched."""
        names = self.step_names()
        if StepKind.ENRICH_GRAPH not in names:
            return None
        return round(sum(s.seconds for s in self.steps[names.index(StepKind.ENRICH_GRAPH) :]), 4)

    def reads(self) -> list[dict[str, Any]]:
        """Every hypothetical answer the loop read, with its enrichment round and perplexity: what a rule
        other than "keep the lowest perplexity" would have answered can be counted from these alone."""
        reads, round_ = [], 0
        for step in self.steps:
            round_ += isinstance(step.record, Enriched)
            if isinstance(step.record, Read):
                read = step.record
                reused = {"reused": True} if read.reused else {}  # the same context, read before
                reads.append({"round": round_, "answer": read.answer, "perplexity": recorded(read.perplexity)} | reused)
        return reads

    def selection(self) -> dict[str, Any] | None:
        """The last entity-first selection behind a context (its entities, bridges, coverage)."""
        selections = [c.selection for c in self.records(ContextBuilt) if c.selection is not None]
        return selections[-1] if selections else None

    def to_dict(self) -> dict[str, Any]:
        # Field by field: `asdict` would deep-copy the callbacks (and whatever they are bound to).
        return {
            "question": self.question,
            "steps": [s.to_dict() for s in self.steps],
            "partitions_written": list(self.partitions_written),
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        """A trace a server sent: its steps' outputs come as `Received` records."""
        return cls(
            data["question"],
            [
                Step(s["tool"], s.get("inputs", {}), Received(s.get("outputs", {})), seconds=s.get("seconds", 0.0))
                for s in data.get("steps", [])
            ],
            list(data.get("partitions_written", [])),
            float(data.get("seconds", 0.0)),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def summary_rows(self) -> list[tuple[str, str, str]]:
        return [(s.kind, f"{s.seconds:.2f}s", s.summary()) for s in self.steps]


_SUMMARY_KEYS = {
    "entry_points",
    "facts",
    "answer",
    "perplexity",
    "decision",
    "reason",
    "expansion_query",
    "new_chunks",
    "partition",
    "indexed",
    "dvc",
    "pagerank_graph",
    "confidence",
}
