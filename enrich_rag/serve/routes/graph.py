"""The graph through the door's `Graph`: counts, partitions, rollback (token), one chunk by id, and the
queue of enrichments that answers left for later."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from enrich_rag.serve.server import Server


class RollbackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    partition: str = Field(min_length=1, max_length=128, description="the partition to undo, as GET /api/graph/partitions lists it")


def router(server: Server) -> APIRouter:
    routes, graph = APIRouter(), server.rag.graph

    @routes.get("/api/graph/stats")
    def graph_stats() -> dict[str, Any]:
        return graph.stats()

    @routes.get("/api/graph/partitions")
    def graph_partitions() -> list[dict[str, Any]]:
        return graph.partitions()

    @routes.post("/api/graph/rollback")
    def graph_rollback(request: RollbackRequest, http: Request) -> dict[str, Any]:
        server.require_token(http, "rollback")
        return graph.rollback(request.partition)

    @routes.get("/api/jobs")
    def jobs() -> dict[str, Any]:
        listed = [j.to_dict() for j in server.rag.jobs()]
        return {"jobs": listed, "counts": {s: sum(j["state"] == s for j in listed) for s in ("pending", "running", "done", "failed")}}

    @routes.get("/api/chunk/{chunk_id}")
    def chunk(chunk_id: str) -> Any:
        passage = server.rag.passage(chunk_id)
        if passage is None:
            return JSONResponse({"error": f"no chunk '{chunk_id}'"}, status_code=404)
        return passage.to_row()

    return routes
