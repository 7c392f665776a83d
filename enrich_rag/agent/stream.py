"""One question as events while it runs: each tool step as it finishes, then the whole answer.
The web page and the CLI show them, `EnrichRAG.ask(stream=True)` yields them, the
server sends them as server-sent events and the chat endpoint as completion chunks.

The loop compares its reads (CheckSufficiency) before it keeps one, so the answer comes once, when it
is chosen: there are no token events (splitting the finished answer into words would only pretend to
stream). What a person waits through is the steps, and those arrive as they happen. Closing the stream
stops the question before its next step.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from enrich_rag.agent.trace import Step

STEP, ANSWER, ERROR, ADMITTED = "step", "answer", "error", "admitted"
CLOSED = "the stream was closed"

OnStep = Callable[[Step], None]
ShouldStop = Callable[[], str | None]


@dataclass(frozen=True)
class Hooks:
    """A caller's callbacks into one question: asked before every tool for a reason to stop, before an
    EnrichGraph round whether it can still fit, and told of each step as it finishes."""

    should_stop: ShouldStop | None = None
    time_for_enrichment: Callable[[], bool] | None = None
    on_step: OnStep | None = None
    answer_by: float | None = None  # monotonic: stop reading then and answer with the best read so far

    def within(self, limit_s: float, reserve_s: float, margin_s: float = 0.0) -> Hooks:
        """The same, stopping past `limit_s` from now, starting no round with under `reserve_s` left, and
        answering with the best read so far `margin_s` before the limit."""
        deadline = time.monotonic() + limit_s

        def stop() -> str | None:
            if self.should_stop and (reason := self.should_stop()):
                return reason
            return f"over the {limit_s:g} s time limit" if time.monotonic() > deadline else None

        def fits() -> bool:
            return self.time_for_enrichment() if self.time_for_enrichment else deadline - time.monotonic() > reserve_s

        answer_by = min(x for x in (self.answer_by, deadline - margin_s) if x is not None)
        return dataclasses.replace(self, should_stop=stop, time_for_enrichment=fits, answer_by=answer_by)

    def or_stop(self, other: ShouldStop) -> Hooks:
        """Also stopped by `other` (a stream closed)."""
        mine = self.should_stop
        return dataclasses.replace(self, should_stop=lambda: other() or (mine() if mine else None))


def admitted_event(time_limit_s: float, expected_wait_s: float) -> dict[str, Any]:
    """A served question's first event, sent at once: it is in the reader's line and will be answered
    (or stopped) within its time limit, so a client never waits in silence while it queues."""
    return {"event": ADMITTED, "time_limit_s": time_limit_s, "expected_wait_s": round(expected_wait_s, 1)}


def step_event(step: Step) -> dict[str, Any]:
    return {"event": STEP, "tool": step.kind, "seconds": step.seconds, "summary": step.summary()}


def answer_event(answer: dict[str, Any]) -> dict[str, Any]:
    """The whole answer: its text, citations, chain, subgraph and trace."""
    return {"event": ANSWER, "answer": answer}


def error_event(message: str) -> dict[str, Any]:
    return {"event": ERROR, "error": message.splitlines()[0] if message else "error"}


def streamed(run: Callable[[OnStep, ShouldStop], dict[str, Any]]) -> Generator[dict[str, Any], None, None]:
    """`run(on_step, should_stop)` on a thread of its own, its events yielded as they come. An error
    the question raised is raised here; closing the iterator stops the question before its next step."""
    events: queue.Queue[dict[str, Any] | BaseException | None] = queue.Queue()
    closed = threading.Event()

    def work() -> None:
        try:
            answer = run(lambda step: events.put(step_event(step)), lambda: CLOSED if closed.is_set() else None)
            events.put(answer_event(answer))
        except BaseException as exc:  # handed to the reader of the stream, raised there
            events.put(exc)
        finally:
            events.put(None)

    threading.Thread(target=work, name="enrich-rag-question", daemon=True).start()
    try:
        while (event := events.get()) is not None:
            if isinstance(event, BaseException):
                raise event
            yield event
    finally:
        closed.set()
