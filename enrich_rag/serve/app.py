"""The HTTP API and the single page: ask, see the answer, its passages, the subgraph and the trace.

One project, opened through its door (`EnrichRAG`), serves every request; each concern is a router of
its own (`routes/`: query and stream, OpenAI chat, graph, settings, page) over the state they share
(`server.py`). Questions wait in one bounded FIFO line in front of the reader (`admission.py`): one that
could not be answered within `serve.query_timeout_s` (waiting and running) is refused at once with 503
and `Retry-After`; one past its limit (or whose client went away) is answered 504 and stops before its
next tool. Reads are open on loopback; writes need the token (`access.py`), and the Host header must
name this server. Bodies over `serve.max_body_bytes` are refused before they are read. Errors are one
line naming the problem.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles

from enrich_rag.agent.trace import QueryStopped
from enrich_rag.api import EnrichRAG, open_workspaces
from enrich_rag.config import Config
from enrich_rag.errors import EnrichRagError
from enrich_rag.serve.access import host_name
from enrich_rag.serve.openai_chat import MODEL
from enrich_rag.serve.routes import chat, graph, page, query, settings
from enrich_rag.serve.server import NotAuthorised, Server


def _one_line(exc: RequestValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    return f"{where}: {first.get('msg', 'invalid')}"


class _BodyTooLarge(Exception):
    pass


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


SERVE_ENV = "ENRICH_RAG_SERVE"  # how `enrich-rag serve --processes N` tells each worker what to open


def app_from_environment() -> FastAPI:
    """One worker process of `enrich-rag serve --processes N` (uvicorn imports it by name): the same app,
    its indexes and models loaded before it takes questions. The workers share the graph store's seed
    file and the reader's weights (mapped, not copied) through the OS; each has its own line of questions."""
    spec = json.loads(os.environ[SERVE_ENV])
    app = served_app(spec["params"], spec["workspaces"], spec["host"], allowed_hosts=tuple(spec["allowed_hosts"]))
    warm_server(app, enrich=next(iter(app.state.servers.values())).config.agent.allow_enrich)
    return app


def served_app(params: Path | str, overlays: Mapping[str, Path | str | None], host: str, allowed_hosts: tuple[str, ...]) -> FastAPI:
    """The server of `enrich-rag serve`: each workspace (name: its overlay on `params`) opened, the
    first with the configured reader, every other with that same reader (one model in memory)."""
    (name, first), *others = open_workspaces(params, overlays).items()
    return create_app(first.config, first, host, allowed_hosts=allowed_hosts, name=name, others=dict(others))


def warm_server(app: FastAPI, enrich: bool) -> None:
    """Every workspace's indexes and models loaded before the server takes questions; the reader's
    prompt heads computed on a thread of their own after that, so the server is ready as soon as its
    models are (a question that comes first waits for the reader, as it would for the head it then no
    longer computes). The workspaces share the reader: its heads are computed once."""
    servers = list(app.state.servers.values())
    for server in servers:
        server.rag.resources.warm(enrich=enrich)
    threading.Thread(target=servers[0].rag.resources.warm_prompts, name="warm-prompts", daemon=True).start()


WORKSPACE_PREFIX = "/w/"  # a workspace's routes: /w/NAME/api/...; the first workspace's also at /api/...


def _guard(app: FastAPI, servers: dict[str, Server], first: Server) -> None:
    """Every request: its Host must name this server; off loopback, every API call needs a token, the
    token of the workspace its path is for (any workspace's on /v1/: the route checks the model's)."""

    def server_of(path: str) -> Server | None:
        """The workspace a path is for (None: a route of the whole server, /v1/ and /api/workspaces)."""
        if path.startswith(WORKSPACE_PREFIX):
            return servers.get(path[len(WORKSPACE_PREFIX) :].split("/", 1)[0])
        return None if path.startswith("/v1/") or path == "/api/workspaces" else first

    @app.middleware("http")
    async def checked_host(http: Request, call_next):
        if not first.access.host_allowed(http.headers.get("host", "")):
            name = host_name(http.headers.get("host", ""))
            return JSONResponse({"error": f"Host '{name[:80]}' is not this server's address"}, status_code=400)
        path = http.url.path
        if first.access.reads_need_token and path.startswith(("/api/", "/v1/", WORKSPACE_PREFIX)):
            owner = server_of(path)
            held = [owner] if owner is not None else list(servers.values())  # /v1/: the route checks the model's
            if not any(s.access.authorised(http.headers) for s in held):
                return JSONResponse(
                    {"error": "this server is bound to a non-loopback address: every API call needs the token"}, status_code=401
                )
        return await call_next(http)


def _one_line_errors(app: FastAPI) -> None:
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


def create_app(
    config: Config,
    rag: EnrichRAG | None = None,
    host: str = "127.0.0.1",
    allowed_hosts: tuple[str, ...] = (),
    name: str = "default",
    others: Mapping[str, EnrichRAG] | None = None,
) -> FastAPI:
    """`rag`: the opened project, the one door every route goes through (default: opened here from
    `config`), served as workspace `name`. `others`: more workspaces served beside it, each its own
    project (graph, indexes, jobs, token) opened with this one's reader, and one line of questions in
    front of that reader for all. `host`: the address the server is bound to (Host headers are held to
    it); `allowed_hosts`: more names it may be reached by."""
    first = Server(config, rag or EnrichRAG(config), host, allowed_hosts=allowed_hosts)
    servers = {name: first} | {
        n: Server(other.config, other, host, allowed_hosts=allowed_hosts, admission=first.admission) for n, other in (others or {}).items()
    }
    app = FastAPI(
        title="EnrichRAG", version="0.1.0", description="Ask questions over your documents; answers come with passages, subgraph and trace."
    )

    _guard(app, servers, first)
    _one_line_errors(app)

    @app.get("/api/workspaces")
    def workspaces() -> dict[str, Any]:
        """The workspaces this server serves, the first being the one /api/... answers for."""
        return {"workspaces": [{"name": n, "corpus": s.config.corpus.source} for n, s in servers.items()], "default": name}

    for n, server in servers.items():
        routers = (query.router(server), graph.router(server), settings.router(server))
        for routes in routers:
            app.include_router(routes, prefix=f"{WORKSPACE_PREFIX}{n}")
            if server is first:
                app.include_router(routes)
    # The OpenAI dialect names a workspace by its model: `enrich-rag` the first, `enrich-rag/NAME` each one.
    models = {MODEL: first} | ({f"{MODEL}/{n}": s for n, s in servers.items()} if len(servers) > 1 else {})
    app.include_router(chat.router(models))
    app.include_router(page.router())
    app.mount("/static", StaticFiles(directory=page.STATIC), name="static")
    app.add_middleware(BodyLimit, max_bytes=config.serve.max_body_bytes)
    app.state.admission, app.state.token_created, app.state.token_path = first.admission, first.token_created, first.token_path
    app.state.resources = first.rag.resources
    app.state.servers = servers
    app.router.on_shutdown.append(first.admission.close)
    for server in servers.values():
        app.router.on_shutdown.append(server.enrichment.stop)
        server.enrichment.start()
    return app
