"""One question as events while it runs: each tool step as it finishes, then the whole answer.
The web page and the CLI show them, `EnrichRAG.ask(stream=True)` yields them, the
server sends them as server-sent events and the chat endpoint as completion chunks.

The loop compares its reads (CheckSufficiency) before it keeps one, so the answer comes once, when it
is chosen: there are no token events (splitting the finished answer into words would only pretend to
stream). What a person waits through is the steps, and those arrive as they happen. Closing the stream
stops the question before its next tool.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator
from typing import Any

from enrich_rag.agent.trace import Step

STEP, ANSWER, ERROR = "step", "answer", "error"
CLOSED = "the stream was closed"

OnStep = Callable[[Step], None]
ShouldStop = Callable[[], str | None]


def step_event(step: Step) -> dict[str, Any]:
    return {"event": STEP, "tool": step.tool, "seconds": step.seconds, "summary": step.summary()}


def answer_event(answer: dict[str, Any]) -> dict[str, Any]:
    """The whole answer: its text, citations, chain, subgraph and trace."""
    return {"event": ANSWER, "answer": answer}


def error_event(message: str) -> dict[str, Any]:
    return {"event": ERROR, "error": message.splitlines()[0] if message else "error"}


def streamed(run: Callable[[OnStep, ShouldStop], dict[str, Any]]) -> Generator[dict[str, Any], None, None]:
    """`run(on_step, should_stop)` on a thread of its own, its events yielded as they come. An error
    the question raised is raised here; closing the iterator stops the question before its next tool."""
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
