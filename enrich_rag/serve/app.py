"""The HTTP API and the single page: ask, see the answer, its passages, the subgraph and the trace.

One `Resources` (graph store, indexes, LLM) serves every request; FastAPI runs the sync endpoints
in its thread pool, and the agent's own locks keep the LLM and graph writes safe. Errors come back
as 400 with one line naming the problem.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from enrich_rag.agent.loop import MAX_QUESTION_CHARS, Agent
from enrich_rag.agent.resources import Resources
from enrich_rag.config import Config
from enrich_rag.errors import EnrichRagError
from enrich_rag.serve import settings as settings_io
from enrich_rag.serve.conversation import Conversations, Turn, resolve_followup

STATIC = Path(__file__).parent / "static"


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    allow_enrich: bool | None = None
    conversation_id: str | None = Field(None, max_length=64)


class RollbackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    partition: str = Field(min_length=1, max_length=128)


def _one_line(exc: RequestValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    return f"{where}: {first.get('msg', 'invalid')}"


def create_app(config: Config, resources: Resources | None = None) -> FastAPI:
    resources = resources or Resources(config)
    resources.writer.reconcile()
    settings_path = Path(config.paths.root) / settings_io.SETTINGS_FILE
    state: dict[str, Any] = {"settings": settings_io.load(settings_path, settings_io.from_configs(config.agent, config.evidence))}
    lock = threading.Lock()
    conversations = Conversations()

    def agent() -> Agent:
        agent_cfg, evidence_cfg = settings_io.apply(state["settings"], config.agent, config.evidence)
        return Agent(resources, agent_cfg, evidence_cfg)

    app = FastAPI(title="EnrichRAG", version="0.1.0",
                  description="Ask questions over your documents; answers come with passages, subgraph and trace.")

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": _one_line(exc)}, status_code=400)

    @app.exception_handler(EnrichRagError)
    async def refused(_: Request, exc: EnrichRagError) -> JSONResponse:
        return JSONResponse({"error": str(exc).splitlines()[0]}, status_code=400)

    @app.post("/api/query")
    def query(request: QueryRequest) -> dict[str, Any]:
        previous = conversations.last(request.conversation_id)
        asked = resolve_followup(request.question, previous)
        answer = agent().answer(asked, allow_enrich=request.allow_enrich)
        analysis = next((s.outputs for s in answer.trace.steps if s.tool == "AnalyzeQuery"), {})
        entities = tuple(analysis.get("entities") or [c.triple for c in answer.citations[:1]])
        conversation_id = conversations.record(request.conversation_id, Turn(asked, answer.answer, entities))
        return answer.to_dict() | {"conversation_id": conversation_id, "resolved_question": asked}

    @app.get("/api/config")
    def get_config() -> dict[str, Any]:
        return state["settings"].model_dump()

    @app.post("/api/config")
    def set_config(update: settings_io.SettingsUpdate) -> dict[str, Any]:
        with lock:
            merged = state["settings"].model_dump() | update.model_dump(exclude_none=True)
            new = settings_io.Settings(**merged)
            settings_io.save(settings_path, new)
            state["settings"] = new
        return new.model_dump()

    @app.get("/api/graph/stats")
    def graph_stats() -> dict[str, Any]:
        return resources.store.counts()

    @app.get("/api/graph/partitions")
    def graph_partitions() -> list[dict[str, Any]]:
        return resources.writer.partitions()

    @app.post("/api/graph/rollback")
    def graph_rollback(request: RollbackRequest) -> dict[str, Any]:
        return resources.writer.rollback(request.partition)

    @app.get("/api/chunk/{chunk_id}")
    def chunk(chunk_id: str) -> dict[str, Any]:
        passage = resources.passages.get(chunk_id)
        if passage is None:
            return JSONResponse({"error": f"no chunk '{chunk_id}'"}, status_code=404)
        return passage.to_row()

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
