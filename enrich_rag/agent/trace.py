"""A record of every step of one question: tool, inputs, what it did (a typed record), time, partitions.

Readers of a trace take the records of one kind (`trace.records(Read)`) and read their fields; the
JSON the API sends (`to_dict`) is produced from the records."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from enrich_rag.agent.records import ContextBuilt, Enriched, Read, Received, StepRecord, Tool
from enrich_rag.agent.sufficiency import recorded
from enrich_rag.errors import EnrichRagError

R = TypeVar("R")
_READER_TOOLS = (Tool.PLAN, Tool.CHECK_SUFFICIENCY, Tool.COMPARE)


class QueryStopped(EnrichRagError):
    """A question given up between two tools: over its time limit, or its client went away. Carries
    the steps run so far (what they cost tells the server how to plan the next question)."""

    def __init__(self, message: str, trace: Trace | None = None):
        super().__init__(message)
        self.trace = trace


class BudgetSpent(EnrichRagError):
    """A question's reader budget is spent: it answers with its best read so far (agent/loop.py)."""


@dataclass(frozen=True)
class ReaderBudget:
    """Reader calls and reader seconds one answer may spend (`agent.max_reader_calls`, `max_reader_s`)."""

    calls: int
    seconds: float
    answer_by: float | None = None  # monotonic: a request's time limit less its margin (serve.answer_margin_s)

    def spent(self, trace: Trace) -> str | None:
        if self.answer_by is not None and time.monotonic() >= self.answer_by:
            return "the time limit is near"
        if (calls := trace.reader_calls()) >= self.calls:
            return f"{calls} of {self.calls} reader calls made"
        if (seconds := trace.reader_seconds()) >= self.seconds:
            return f"{seconds:.1f} of {self.seconds:g} reader seconds spent"
        return None


@dataclass
class Step:
    tool: Tool | str
    inputs: dict[str, Any]
    record: StepRecord | None = None  # set by the orchestrator once the tool returns
    seconds: float = 0.0

    @property
    def outputs(self) -> dict[str, Any]:
        """The record as the API sends it."""
        return self.record.to_dict() if self.record is not None else {}

    def to_dict(self) -> dict[str, Any]:
        return {"tool": str(self.tool), "inputs": self.inputs, "outputs": self.outputs, "seconds": self.seconds}

    def summary(self) -> str:
        """The few outputs a person follows the question by (the CLI's table, the stream's step lines)."""
        return ", ".join(f"{k}={v}" for k, v in self.outputs.items() if k in _SUMMARY_KEYS)


@dataclass
class Trace:
    question: str
    steps: list[Step] = field(default_factory=list)
    partitions_written: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # Asked before every tool; a reason stops the question there (tools themselves are never cut
    # in half, so an enrichment commit always finishes).
    should_stop: Callable[[], str | None] | None = field(default=None, repr=False, compare=False)
    # Told of each step as it finishes (a stream's step events).
    on_step: Callable[[Step], None] | None = field(default=None, repr=False, compare=False)
    # Asked before every reader call: a spent budget ends the reading there (BudgetSpent).
    budget: ReaderBudget | None = field(default=None, repr=False, compare=False)

    @contextmanager
    def step(self, tool: Tool, **inputs: Any) -> Iterator[Step]:
        reason = self.should_stop() if self.should_stop else None
        if reason:
            raise QueryStopped(f"stopped before {tool}: {reason}", self)
        if tool in _READER_TOOLS and self.budget is not None and (spent := self.budget.spent(self)):
            raise BudgetSpent(spent)
        step = Step(tool, inputs)
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

    def tools(self) -> list[str]:
        return [str(s.tool) for s in self.steps]

    def records(self, kind: type[R]) -> list[R]:
        """Every record of one kind, in the order the loop made them."""
        return [s.record for s in self.steps if isinstance(s.record, kind)]

    def first(self, kind: type[R]) -> R | None:
        found = self.records(kind)
        return found[0] if found else None

    def reader_calls(self) -> int:
        """Calls of the reader while answering (a read of a context read before calls nothing; an
        enrichment's extraction calls are its job's, not counted here)."""
        return sum(s.tool in _READER_TOOLS for s in self.steps) - sum(r.reused for r in self.records(Read))

    def reader_seconds(self) -> float:
        """Seconds spent in the steps that call the reader."""
        return sum(s.seconds for s in self.steps if s.tool in _READER_TOOLS)

    def enrichment_seconds(self) -> float | None:
        """What enriching cost this question: the first EnrichGraph and every step after it (the
        retried round that reads it). None when the question never enriched."""
        tools = self.tools()
        if Tool.ENRICH_GRAPH not in tools:
            return None
        return round(sum(s.seconds for s in self.steps[tools.index(Tool.ENRICH_GRAPH) :]), 4)

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
            [Step(s["tool"], s.get("inputs", {}), Received(s.get("outputs", {})), s.get("seconds", 0.0)) for s in data.get("steps", [])],
            list(data.get("partitions_written", [])),
            float(data.get("seconds", 0.0)),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def summary_rows(self) -> list[tuple[str, str, str]]:
        return [(s.tool, f"{s.seconds:.2f}s", s.summary()) for s in self.steps]


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
