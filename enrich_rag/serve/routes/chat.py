"""The OpenAI chat dialect (`serve/openai_chat.py`): the API key is the write token."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from enrich_rag.agent.stream import OnStep
from enrich_rag.errors import EnrichRagError
from enrich_rag.evidence.query_analysis import validate_question
from enrich_rag.serve.admission import Busy, Ticket
from enrich_rag.serve.openai_chat import ChatRequest, ChunkWriter, chat_error, checked, completion, previous_turn
from enrich_rag.serve.server import Asking, Server, busy_reply, sse


def router(models: dict[str, Server]) -> APIRouter:
    """`models`: the workspace each model name answers from."""
    routes = APIRouter()

    @routes.get("/v1/models")
    def chat_models() -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": m, "object": "model", "created": s.started, "owned_by": "enrich-rag"} for m, s in models.items()],
        }

    @routes.post("/v1/chat/completions")
    async def chat_completions(request: ChatRequest, http: Request) -> Any:
        if problem := checked(request, tuple(models)):
            return JSONResponse(*chat_error(problem, 404 if problem.startswith("model") else 400))
        server = models[request.model]
        question, previous = previous_turn(request.messages, server.conversations.last)
        try:
            question = validate_question(question)
        except EnrichRagError as exc:
            return JSONResponse(*chat_error(str(exc).splitlines()[0], 400))

        def start(on_step: OnStep | None = None) -> Ticket:
            return server.submit(Asking(question, previous), http, on_step)

        if request.stream:
            writer = ChunkWriter(request.model)
            return server.events_response(start, http, lambda e: "".join(sse(c) for c in writer.chunks(e)), done="data: [DONE]\n\n")
        try:
            ticket = start()
        except Busy as busy:
            return busy_reply(busy)
        result = await server.outcome(ticket, http)
        if isinstance(result, Busy):
            return busy_reply(result)
        return JSONResponse(*chat_error(result[1], result[0])) if isinstance(result, tuple) else completion(result, request.model)

    return routes
