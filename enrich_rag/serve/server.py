"""What every route of the server shares: the project's door, the reader's line, access, conversations
and saved settings, and the way a question goes from a request to an answer (admission, time limit,
read-only without the token, streamed or whole)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, StreamingResponse

from enrich_rag.agent.answer import permitted
from enrich_rag.agent.stream import Hooks, OnStep, admitted_event, answer_event, error_event, step_event
from enrich_rag.agent.trace import QueryAnalyzed, QueryStopped, Step
from enrich_rag.api import EnrichRAG, Settings
from enrich_rag.config import Config
from enrich_rag.errors import EnrichRagError
from enrich_rag.llm.base import TokenCount
from enrich_rag.serve.access import TOKEN_FILE, Access, load_or_create_token
from enrich_rag.serve.admission import Admission, Busy, Ticket
from enrich_rag.serve.conversation import Conversations, Turn, resolve_followup
from enrich_rag.serve.enrichment_worker import EnrichmentWorker
from enrich_rag.serve.openai_chat import turn_key
from enrich_rag.serve.saved_settings import SavedSettings


class NotAuthorised(Exception):
    pass


@dataclass(frozen=True)
class Asking:
    """One question as a client sent it: what the server was asked to do, before admission."""

    question: str
    previous: Turn | None = None
    conversation_id: str | None = None
    enrich: bool | None = None  # None: the server's `agent.allow_enrich` (with the token)
    abstain: bool | None = None  # None: the server's `agent.abstain`


def busy_reply(busy: Busy) -> JSONResponse:
    retry = max(1, math.ceil(busy.retry_after_s))  # the header takes whole seconds
    headers = {"Retry-After": str(retry)}
    return JSONResponse({"error": f"busy: {busy}; retry in {retry} s", "retry_after_s": retry}, status_code=503, headers=headers)


def sse(event: dict[str, Any]) -> str:
    return f"data: {json.dumps(event, default=str)}\n\n"


def _awaited(ticket: Ticket) -> asyncio.Future:
    future = asyncio.wrap_future(ticket.future)
    future.add_done_callback(lambda f: f.cancelled() or f.exception())  # a question stopped after we replied
    return future


class Server:
    """One workspace as the routes see it. `admission`: the line of another workspace whose reader this
    one shares (one reader, one line); by default a line of its own."""

    def __init__(self, config: Config, rag: EnrichRAG, host: str, allowed_hosts: tuple[str, ...], admission: Admission | None = None):
        self.config, self.rag = config, rag
        serve = config.serve
        self.settings = SavedSettings(config)
        self.conversations = Conversations()
        # An answer's bound, then its tail; within a limit shorter than that, the limit (it stops reading
        # `answer_margin_s` before it).
        bound_s = min(self.config.agent.max_answer_s + serve.answer_margin_s, serve.query_timeout_s)
        self.admission = admission or Admission(serve.workers, serve.queue_size, serve.expected_question_s, bound_s=bound_s)
        rag.resources.questions_first(self.admission.idle)  # an enrichment round's reader calls wait for questions
        self.enrichment = EnrichmentWorker(rag, self.admission.idle, serve.job_poll_s)
        self.token_path = Path(config.paths.root) / TOKEN_FILE
        token, self.token_created = load_or_create_token(self.token_path)
        self.access = Access(token, host, allowed_hosts)
        self.limit_s = serve.query_timeout_s
        self.started = int(time.time())

    def saved(self) -> Settings:
        """The page's saved agent and evidence settings."""
        effective = self.settings.effective_config()
        return effective.agent, effective.evidence

    def require_token(self, http: Request, what: str) -> None:
        if not self.access.authorised(http.headers):
            raise NotAuthorised(f"{what} needs the write token (Authorization: Bearer <token from {self.token_path}>)")

    def over_limit(self) -> str:
        return f"question over the {self.limit_s:g} s time limit (serve.query_timeout_s); it stops before its next step"

    def submit(self, asking: Asking, http: Request, on_step: OnStep | None = None) -> Ticket:
        """The question in the reader's line (Busy when it cannot be answered in time); read-only without the token."""
        if not self.access.authorised(http.headers):
            if asking.enrich:
                self.require_token(http, "enrichment (allow_enrich)")
            asking = dataclasses.replace(asking, enrich=False)
        return self.admission.submit(lambda ticket: self._answer(asking, ticket, on_step), self.limit_s)

    def _answer(self, asking: Asking, ticket: Ticket, on_step: OnStep | None) -> dict[str, Any]:
        def should_stop() -> str | None:
            if ticket.cancelled.is_set():
                return "the client disconnected"
            return f"over the {self.limit_s:g} s time limit" if time.monotonic() > ticket.deadline else None

        def time_for_enrichment() -> bool:  # a round and the retry that reads it must fit in what is left
            return ticket.deadline - time.monotonic() > max(self.config.serve.enrich_reserve_s, self.admission.enrichment_plan_s())

        asked = resolve_followup(asking.question, asking.previous)
        counted: TokenCount | None = getattr(self.rag.resources.llm, "tokens", None) if self.config.serve.workers == 1 else None
        tokens_before = counted.copy() if counted is not None else None
        try:
            hooks = Hooks(
                should_stop=should_stop,
                time_for_enrichment=time_for_enrichment,
                on_step=on_step,
                answer_by=ticket.deadline - self.config.serve.answer_margin_s,
            )
            enrich = permitted(asking.enrich, self.config.agent)
            answer = self.rag.ask(asked, enrich=enrich, abstain=asking.abstain, settings=self.saved(), hooks=hooks)
        except QueryStopped as stopped:  # an enrichment that overran is the one the plan most needs to know
            if stopped.trace is not None and (enriching := stopped.trace.enrichment_seconds()) is not None:
                self.admission.record_enrichment(enriching)
            raise
        if (enriching := answer.trace.enrichment_seconds()) is not None:
            self.admission.record_enrichment(enriching)
        analyzed = answer.trace.first(QueryAnalyzed)
        entities = analyzed.analysis.entities if analyzed else ()
        turn = Turn(asked, answer.answer, tuple(entities or [c.source for c in answer.citations[:1]]))
        self.conversations.record(turn_key(asking.question, answer.answer), turn)  # how a chat client sends this turn back
        conversation_id = self.conversations.record(asking.conversation_id, turn)
        # With one reader line, what the reader counted while this question ran is this question's.
        tokens = counted.since(tokens_before) if counted is not None and tokens_before is not None else {}
        return answer.to_dict() | {"conversation_id": conversation_id, "resolved_question": asked} | ({"tokens": tokens} if tokens else {})

    def finished(self, ticket: Ticket, http: Request) -> dict[str, Any]:
        return ticket.future.result() | {"timing": ticket.timing(), "read_only": not self.access.authorised(http.headers)}

    async def outcome(self, ticket: Ticket, http: Request) -> dict[str, Any] | tuple[int, str] | Busy:
        """The answer, or why there is none: (status, one line) once the client left or time ran out, or the
        refusal of a question whose wait left it too little time to answer."""
        job = _awaited(ticket)
        while not job.done():
            await asyncio.wait({job}, timeout=0.25)
            if job.done():
                break
            if await http.is_disconnected():
                ticket.cancelled.set()
                return 499, "client disconnected"
            if time.monotonic() > ticket.deadline:
                ticket.cancelled.set()
                return 504, self.over_limit()
        try:
            return self.finished(ticket, http)
        except QueryStopped as exc:
            return 504, str(exc).splitlines()[0]
        except Busy as busy:
            return busy

    def events_response(
        self, start: Callable[[OnStep], Ticket], http: Request, encode: Callable[[dict[str, Any]], str], done: str = ""
    ) -> Any:
        """A question's events as a server-sent stream: that it was let in, at once, then each step and the
        answer. Closing the stream stops the question before its next tool."""
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def on_step(step: Step) -> None:  # on the reader's thread
            loop.call_soon_threadsafe(events.put_nowait, step_event(step))

        try:
            ticket = start(on_step)
        except Busy as busy:
            return busy_reply(busy)
        job = _awaited(ticket)

        async def body() -> AsyncIterator[str]:
            try:
                yield encode(admitted_event(self.limit_s, ticket.expected_wait_s))
                while True:
                    try:
                        yield encode(await asyncio.wait_for(events.get(), 0.25))
                        continue
                    except TimeoutError:
                        pass
                    if job.done():
                        while not events.empty():
                            yield encode(events.get_nowait())
                        try:
                            answered = self.finished(ticket, http)
                        except (EnrichRagError, Busy) as exc:
                            yield encode(error_event(f"busy: {exc}" if isinstance(exc, Busy) else str(exc)))
                            return
                        yield encode(answer_event(answered))
                        yield done
                        return
                    if time.monotonic() > ticket.deadline:
                        yield encode(error_event(self.over_limit()))
                        return
            finally:  # done, over time, or the client went away
                ticket.cancelled.set()

        return StreamingResponse(body(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
