"""Ask: one question, whole or as server-sent events; and the reader's line."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from enrich_rag.agent.stream import OnStep
from enrich_rag.evidence.query_analysis import MAX_QUESTION_CHARS
from enrich_rag.serve.admission import Busy, Ticket
from enrich_rag.serve.server import Asking, Server, busy_reply, sse


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="the question")
    allow_enrich: bool | None = Field(None, description="may the answer write to the graph (needs the token); null: `agent.allow_enrich`")
    abstain: bool | None = Field(None, description="say 'not found' rather than guess when still unsure; null: `agent.abstain`")
    conversation_id: str | None = Field(None, max_length=64, description="a follow-up is read with this conversation's last turn")
    stream: bool = Field(False, description="server-sent events: each step as it finishes, then the answer")


def rss_mb() -> dict[str, float]:
    import psutil

    process = psutil.Process()
    return {"rss_mb": round(process.memory_info().rss / 2**20, 1)}


def router(server: Server) -> APIRouter:
    routes = APIRouter()

    @routes.post("/api/query")
    async def query(request: QueryRequest, http: Request) -> Any:
        def start(on_step: OnStep | None = None) -> Ticket:
            previous = server.conversations.last(request.conversation_id)
            asking = Asking(request.question, previous, request.conversation_id, enrich=request.allow_enrich, abstain=request.abstain)
            return server.submit(asking, http, on_step)

        if request.stream:  # server-sent events; the answer event carries what the JSON reply would
            return server.events_response(start, http, sse)
        try:
            ticket = start()
        except Busy as busy:
            return busy_reply(busy)
        result = await server.outcome(ticket, http)
        if isinstance(result, Busy):
            return busy_reply(result)
        if isinstance(result, tuple):
            return JSONResponse({"error": result[1], "timing": ticket.timing()}, status_code=result[0])
        return result

    @routes.get("/api/health")
    def health() -> dict[str, Any]:
        """The reader's line (queued, running, mean seconds per question) and this process's memory."""
        return {"status": "ok", "time_limit_s": server.limit_s} | server.admission.health() | rss_mb()

    return routes
