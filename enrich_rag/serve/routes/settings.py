"""The page's saved settings: read by anyone, changed and reset with the token."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from enrich_rag.serve.server import Server


def router(server: Server) -> APIRouter:
    routes, saved = APIRouter(), server.settings

    @routes.get("/api/settings")
    def get_settings() -> dict[str, Any]:
        """The values questions from the page run with, and the saved overlay on params.yaml that sets them."""
        return saved.view()

    @routes.post("/api/settings")
    def set_settings(update: dict[str, Any], http: Request) -> dict[str, Any]:
        """Any subset of the page's settings, checked by the config's rules; saved as the overlay (needs the token)."""
        server.require_token(http, "changing the settings")
        saved.update(update)
        return saved.view()

    @routes.delete("/api/settings")
    def reset_settings(http: Request) -> dict[str, Any]:
        """Drop the overlay: questions run with params.yaml again (needs the token)."""
        server.require_token(http, "resetting the settings")
        saved.reset()
        return saved.view()

    return routes
