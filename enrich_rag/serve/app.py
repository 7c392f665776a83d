"""The HTTP API and the single page: ask, see the answer, its passages, the subgraph and the trace.

One `Resources` (graph store, indexes, LLM) serves every request. Questions wait in one bounded FIFO
line in front of the reader (`admission.py`): one that could not be answered within
`serve.query_timeout_s` (waiting and running) is refused at once with 503 and `Retry-After`; one past
its limit (or whose client went away) is answered 504 and stops before its next tool. Reads are open
on loopback; writes need the token (`access.py`), and the Host header must name this server. Bodies
over `serve.max_body_bytes` are refused before they are read. Errors are one line naming the problem.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from enrich_rag.agent.loop import MAX_QUESTION_CHARS, Agent, validate_question
from enrich_rag.agent.records import QueryAnalyzed
from enrich_rag.agent.stream import OnStep, answer_event, error_event, step_event
from enrich_rag.agent.trace import QueryStopped, Step
from enrich_rag.api import EnrichRAG
from enrich_rag.config import Config
from enrich_rag.errors import EnrichRagError
from enrich_rag.serve import settings as settings_io
from enrich_rag.serve.access import TOKEN_FILE, Access, host_name, load_or_create_token
from enrich_rag.serve.admission import Admission, Busy, Ticket
from enrich_rag.serve.conversation import Conversations, Turn, resolve_followup
from enrich_rag.serve.openai_chat import MODEL, ChatRequest, ChunkWriter, chat_error, checked, completion, previous_turn, turn_key

STATIC = Path(__file__).parent / "static"


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    allow_enrich: bool | None = None  # None: the server's `agent.allow_enrich` (with the token)
    abstain: bool | None = None  # None: the server's `agent.abstain`
    conversation_id: str | None = Field(None, max_length=64)
    stream: bool = False  # server-sent events: each step as it finishes, then the answer's tokens


@dataclass(frozen=True)
class Asking:
    """One question as a client sent it: what the server was asked to do, before admission."""

    question: str
    previous: Turn | None = None
    conversation_id: str | None = None
    enrich: bool | None = None
    abstain: bool | None = None


class RollbackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    partition: str = Field(min_length=1, max_length=128)


def _one_line(exc: RequestValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    return f"{where}: {first.get('msg', 'invalid')}"


class _BodyTooLarge(Exception):
    pass


class NotAuthorised(Exception):
    pass


def rss_mb() -> dict[str, float]:
    import psutil

    process = psutil.Process()
    return {"rss_mb": round(process.memory_info().rss / 2**20, 1)}


async def _refuse(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """ASGI middleware: a declared length over the limit is refused unread; an undeclared (chunked)
    body is cut off as soon as it passes the limit, so no request can make the server buffer more."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        message = f"request body over the {self.max_bytes:,}-byte limit"
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            return await _refuse(send, 413, message)
        received, over, refused = 0, False, False

        async def limited():
            nonlocal received, over
            event = await receive()
            received += len(event.get("body", b""))
            if received > self.max_bytes:
                over = True
                raise _BodyTooLarge  # stops the read; FastAPI turns it into its own error response
            return event

        async def guarded(event):
            nonlocal refused
            if not over:
                return await send(event)
            if not refused:  # whatever the app answers to a cut-off body, the client gets the 413
                refused = True
                await _refuse(send, 413, message)

        try:
            await self.app(scope, limited, guarded)
        except _BodyTooLarge:
            if not refused:
                await _refuse(send, 413, message)


def busy_reply(busy: Busy) -> JSONResponse:
    retry = max(1, math.ceil(busy.retry_after_s))  # the header takes whole seconds
    headers = {"Retry-After": str(retry)}
    return JSONResponse({"error": f"busy: {busy}; retry in {retry} s", "retry_after_s": retry}, status_code=503, headers=headers)


def awaited(ticket: Ticket) -> asyncio.Future:
    future = asyncio.wrap_future(ticket.future)
    future.add_done_callback(lambda f: f.cancelled() or f.exception())  # a question stopped after we replied
    return future


def sse(event: dict[str, Any]) -> str:
    return f"data: {json.dumps(event, default=str)}\n\n"


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_size


SERVE_ENV = "ENRICH_RAG_SERVE"  # how `enrich-rag serve --processes N` tells each worker what to open


def app_from_environment() -> FastAPI:
    """One worker process of `enrich-rag serve --processes N` (uvicorn imports it by name): the same app,
    its indexes and models loaded before it takes questions. The workers share the graph store's seed
    file and the reader's weights (mapped, not copied) through the OS; each has its own line of questions."""
    from enrich_rag.config import load_config

    spec = json.loads(os.environ[SERVE_ENV])
    config = load_config(spec["params"], spec["overlay"])
    app = create_app(config, host=spec["host"], allowed_hosts=tuple(spec["allowed_hosts"]))
    app.state.resources.warm(enrich=config.agent.allow_enrich)
    return app


def create_app(config: Config, rag: EnrichRAG | None = None, host: str = "127.0.0.1", allowed_hosts: tuple[str, ...] = ()) -> FastAPI:
    """`rag`: the opened project, the one door every route goes through (default: opened here from `config`). `host`: the
    address the server is bound to (Host headers are held to it); `allowed_hosts`: more names it may
    be reached by."""
    rag = rag or EnrichRAG(config)
    resources = rag.resources
    settings_path = Path(config.paths.root) / settings_io.SETTINGS_FILE
    state: dict[str, Any] = {"overlay": settings_io.load(settings_path), "stamp": _stamp(settings_path)}
    lock = threading.Lock()
    conversations = Conversations()
    serve = config.serve
    admission = Admission(serve.workers, serve.queue_size, serve.expected_question_s)
    token_path = Path(config.paths.root) / TOKEN_FILE
    token, token_created = load_or_create_token(token_path)
    access = Access(token, host, allowed_hosts)
    limit_s = serve.query_timeout_s
    started = int(time.time())

    def overlay() -> dict[str, Any]:
        """The saved overlay, read again when its file changed (another worker process saved it)."""
        with lock:
            if (stamp := _stamp(settings_path)) != state["stamp"]:
                state["overlay"], state["stamp"] = settings_io.load(settings_path), stamp
            return state["overlay"]

    def save_overlay(values: dict[str, Any]) -> None:
        settings_io.save(settings_path, values)
        state["overlay"], state["stamp"] = values, _stamp(settings_path)

    def agent(abstain: bool | None = None) -> Agent:
        effective = settings_io.apply(config, settings_io.check(settings_io.effective(config, overlay())))
        chosen = effective.agent if abstain is None else dataclasses.replace(effective.agent, abstain=abstain)
        return rag.agent(chosen, effective.evidence)

    def settings_view() -> dict[str, Any]:
        current = overlay()
        return {"settings": settings_io.effective(config, current), "overlay": current, "overlay_file": str(settings_path)}

    def require_token(http: Request, what: str) -> None:
        if not access.authorised(http.headers):
            raise NotAuthorised(f"{what} needs the write token (Authorization: Bearer <token from {token_path}>)")

    app = FastAPI(
        title="EnrichRAG", version="0.1.0", description="Ask questions over your documents; answers come with passages, subgraph and trace."
    )

    @app.middleware("http")
    async def checked_host(http: Request, call_next):
        if not access.host_allowed(http.headers.get("host", "")):
            name = host_name(http.headers.get("host", ""))
            return JSONResponse({"error": f"Host '{name[:80]}' is not this server's address"}, status_code=400)
        if access.reads_need_token and http.url.path.startswith(("/api/", "/v1/")) and not access.authorised(http.headers):
            return JSONResponse(
                {"error": "this server is bound to a non-loopback address: every API call needs the token"}, status_code=401
            )
        return await call_next(http)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": _one_line(exc)}, status_code=400)

    @app.exception_handler(NotAuthorised)
    async def unauthorised(_: Request, exc: NotAuthorised) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=401)

    @app.exception_handler(QueryStopped)
    async def stopped(_: Request, exc: QueryStopped) -> JSONResponse:
        return JSONResponse({"error": str(exc).splitlines()[0]}, status_code=504)

    @app.exception_handler(EnrichRagError)
    async def refused(_: Request, exc: EnrichRagError) -> JSONResponse:
        return JSONResponse({"error": str(exc).splitlines()[0]}, status_code=400)

    def answer(asked_for: Asking, ticket: Ticket, on_step: OnStep | None) -> dict[str, Any]:
        question, previous, conversation_id = asked_for.question, asked_for.previous, asked_for.conversation_id

        def should_stop() -> str | None:
            if ticket.cancelled.is_set():
                return "the client disconnected"
            return f"over the {limit_s:g} s time limit" if time.monotonic() > ticket.deadline else None

        def time_for_enrichment() -> bool:  # a round and the retry that reads it must fit in what is left
            return ticket.deadline - time.monotonic() > max(serve.enrich_reserve_s, admission.enrichment_plan_s())

        asked = resolve_followup(question, previous)
        try:
            answer = agent(asked_for.abstain).answer(
                asked, allow_enrich=asked_for.enrich, should_stop=should_stop, time_for_enrichment=time_for_enrichment, on_step=on_step
            )
        except QueryStopped as stopped:  # an enrichment that overran is the one the plan most needs to know
            if stopped.trace is not None and (enriching := stopped.trace.enrichment_seconds()) is not None:
                admission.record_enrichment(enriching)
            raise
        if (enriching := answer.trace.enrichment_seconds()) is not None:
            admission.record_enrichment(enriching)
        analyzed = answer.trace.first(QueryAnalyzed)
        entities = analyzed.analysis.entities if analyzed else ()
        turn = Turn(asked, answer.answer, tuple(entities or [c.source for c in answer.citations[:1]]))
        conversations.record(turn_key(question, answer.answer), turn)  # how a chat client sends this turn back
        conversation_id = conversations.record(conversation_id, turn)
        return answer.to_dict() | {"conversation_id": conversation_id, "resolved_question": asked}

    def over_limit() -> str:
        return f"question over the {limit_s:g} s time limit (serve.query_timeout_s); it stops before its next step"

    def submit(asked_for: Asking, http: Request, on_step: OnStep | None = None) -> Ticket:
        """The question in the reader's line (Busy when it cannot be answered in time); read-only without the token."""
        if not access.authorised(http.headers):
            if asked_for.enrich:
                require_token(http, "enrichment (allow_enrich)")
            asked_for = dataclasses.replace(asked_for, enrich=False)
        return admission.submit(lambda t: answer(asked_for, t, on_step), limit_s)

    def finished(ticket: Ticket, http: Request) -> dict[str, Any]:
        return ticket.future.result() | {"timing": ticket.timing(), "read_only": not access.authorised(http.headers)}

    async def outcome(ticket: Ticket, http: Request) -> dict[str, Any] | tuple[int, str]:
        """The answer, or why there is none (status, one line) once the client left or time ran out."""
        job = awaited(ticket)
        while not job.done():
            await asyncio.wait({job}, timeout=0.25)
            if job.done():
                break
            if await http.is_disconnected():
                ticket.cancelled.set()
                return 499, "client disconnected"
            if time.monotonic() > ticket.deadline:
                ticket.cancelled.set()
                return 504, over_limit()
        try:
            return finished(ticket, http)
        except QueryStopped as exc:
            return 504, str(exc).splitlines()[0]

    @app.post("/api/query")
    async def query(request: QueryRequest, http: Request) -> Any:
        def start(on_step: OnStep | None = None) -> Ticket:
            previous = conversations.last(request.conversation_id)
            asked_for = Asking(request.question, previous, request.conversation_id, request.allow_enrich, request.abstain)
            return submit(asked_for, http, on_step)

        if request.stream:  # server-sent events; the answer event carries what the JSON reply would
            return events_response(start, lambda ticket: finished(ticket, http), sse)
        try:
            ticket = start()
        except Busy as busy:
            return busy_reply(busy)
        result = await outcome(ticket, http)
        if isinstance(result, tuple):
            return JSONResponse({"error": result[1], "timing": ticket.timing()}, status_code=result[0])
        return result

    @app.get("/v1/models")
    def chat_models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL, "object": "model", "created": started, "owned_by": "enrich-rag"}]}

    @app.post("/v1/chat/completions")
    async def chat_completions(request: ChatRequest, http: Request) -> Any:
        """OpenAI chat completions (`serve/openai_chat.py`): the API key is the write token."""
        if problem := checked(request):
            return JSONResponse(*chat_error(problem, 404 if problem.startswith("model") else 400))
        question, previous = previous_turn(request.messages, conversations.last)
        try:
            question = validate_question(question)
        except EnrichRagError as exc:
            return JSONResponse(*chat_error(str(exc).splitlines()[0], 400))

        def start(on_step: OnStep | None = None) -> Ticket:
            return submit(Asking(question, previous), http, on_step)

        if request.stream:
            writer = ChunkWriter()
            return events_response(
                start, lambda ticket: finished(ticket, http), lambda e: "".join(sse(c) for c in writer.chunks(e)), done="data: [DONE]\n\n"
            )
        try:
            ticket = start()
        except Busy as busy:
            return busy_reply(busy)
        result = await outcome(ticket, http)
        return JSONResponse(*chat_error(result[1], result[0])) if isinstance(result, tuple) else completion(result)

    def events_response(
        start: Callable[[OnStep], Ticket],
        result: Callable[[Ticket], dict[str, Any]],
        encode: Callable[[dict[str, Any]], str],
        done: str = "",
    ) -> Any:
        """A question's events as a server-sent stream. Closing the stream stops the question before its next tool."""
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def on_step(step: Step) -> None:  # on the reader's thread
            loop.call_soon_threadsafe(events.put_nowait, step_event(step))

        try:
            ticket = start(on_step)
        except Busy as busy:
            return busy_reply(busy)
        job = awaited(ticket)

        async def body() -> AsyncIterator[str]:
            try:
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
                            answered = result(ticket)
                        except EnrichRagError as exc:
                            yield encode(error_event(str(exc)))
                            return
                        yield encode(answer_event(answered))
                        yield done
                        return
                    if time.monotonic() > ticket.deadline:
                        yield encode(error_event(over_limit()))
                        return
            finally:  # done, over time, or the client went away
                ticket.cancelled.set()

        return StreamingResponse(body(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    @app.get("/api/health")
    def health() -> dict[str, Any]:
        """The reader's line (queued, running, mean seconds per question) and this process's memory."""
        return {"status": "ok", "time_limit_s": limit_s} | admission.health() | rss_mb()

    @app.get("/api/settings")
    def get_settings() -> dict[str, Any]:
        """The values questions from the page run with, and the saved overlay on params.yaml that sets them."""
        return settings_view()

    @app.post("/api/settings")
    def set_settings(update: dict[str, Any], http: Request) -> dict[str, Any]:
        """Any subset of the page's settings, checked by the config's rules; saved as the overlay (needs the token)."""
        require_token(http, "changing the settings")
        checked = settings_io.check(update)
        current = overlay()
        with lock:
            save_overlay({s: current.get(s, {}) | checked.get(s, {}) for s in {*current, *checked}})
        return settings_view()

    @app.delete("/api/settings")
    def reset_settings(http: Request) -> dict[str, Any]:
        """Drop the overlay: questions run with params.yaml again (needs the token)."""
        require_token(http, "resetting the settings")
        with lock:
            save_overlay({})
        return settings_view()

    @app.get("/api/graph/stats")
    def graph_stats() -> dict[str, Any]:
        return rag.graph.stats()

    @app.get("/api/graph/partitions")
    def graph_partitions() -> list[dict[str, Any]]:
        return rag.graph.partitions()

    @app.post("/api/graph/rollback")
    def graph_rollback(request: RollbackRequest, http: Request) -> dict[str, Any]:
        require_token(http, "rollback")
        return rag.graph.rollback(request.partition)

    @app.get("/api/chunk/{chunk_id}")
    def chunk(chunk_id: str) -> Any:
        passage = rag.passage(chunk_id)
        if passage is None:
            return JSONResponse({"error": f"no chunk '{chunk_id}'"}, status_code=404)
        return passage.to_row()

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BodyLimit, max_bytes=config.serve.max_body_bytes)
    app.state.admission, app.state.token_created, app.state.token_path = admission, token_created, token_path
    app.state.resources = resources
    app.router.on_shutdown.append(admission.close)
    return app
