"""Retrieval and enrichment settings the web page may change: validated, persisted, applied."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.storage.atomic import atomic_file

SETTINGS_FILE = "api_settings.json"
AGENT_KEYS = ("allow_enrich", "entry_points", "max_iterations", "ppl_threshold", "max_enrich_rounds", "enrich_chunks", "context_facts")
EVIDENCE_KEYS = ("entity_first", "k", "candidates", "rerank", "micro_queries", "bridges", "rounds")


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    allow_enrich: bool
    entry_points: int = Field(ge=1, le=200)
    max_iterations: int = Field(ge=1, le=10)
    ppl_threshold: float = Field(gt=1.0, le=1e6)
    max_enrich_rounds: int = Field(ge=0, le=5)
    enrich_chunks: int = Field(ge=1, le=50)
    context_facts: int = Field(ge=1, le=50)
    entity_first: bool
    k: int = Field(ge=1, le=20, description="evidence passages handed to the generator")
    candidates: int = Field(ge=1, le=200)
    rerank: Literal["entity", "none", "llm"]
    micro_queries: bool
    bridges: bool
    rounds: int = Field(ge=0, le=5)


class SettingsUpdate(BaseModel):
    """Any subset of `Settings`; unknown keys are an error, not ignored."""

    model_config = ConfigDict(extra="forbid")
    allow_enrich: bool | None = None
    entry_points: int | None = Field(None, ge=1, le=200)
    max_iterations: int | None = Field(None, ge=1, le=10)
    ppl_threshold: float | None = Field(None, gt=1.0, le=1e6)
    max_enrich_rounds: int | None = Field(None, ge=0, le=5)
    enrich_chunks: int | None = Field(None, ge=1, le=50)
    context_facts: int | None = Field(None, ge=1, le=50)
    entity_first: bool | None = None
    k: int | None = Field(None, ge=1, le=20)
    candidates: int | None = Field(None, ge=1, le=200)
    rerank: Literal["entity", "none", "llm"] | None = None
    micro_queries: bool | None = None
    bridges: bool | None = None
    rounds: int | None = Field(None, ge=0, le=5)


def from_configs(agent: AgentConfig, evidence: EvidenceConfig) -> Settings:
    values = {k: getattr(agent, k) for k in AGENT_KEYS} | {k: getattr(evidence, k) for k in EVIDENCE_KEYS}
    if values["rerank"] not in ("entity", "none", "llm"):
        values["rerank"] = "entity"  # a cross-encoder path in params.yaml is not offered on the page
    return Settings(**values)


def apply(settings: Settings, agent: AgentConfig, evidence: EvidenceConfig) -> tuple[AgentConfig, EvidenceConfig]:
    data = settings.model_dump()
    return (dataclasses.replace(agent, **{k: data[k] for k in AGENT_KEYS}),
            dataclasses.replace(evidence, **{k: data[k] for k in EVIDENCE_KEYS}))


def load(path: Path, default: Settings) -> Settings:
    if not path.is_file():
        return default
    return Settings(**(default.model_dump() | json.loads(path.read_text(encoding="utf-8"))))


def save(path: Path, settings: Settings) -> None:
    with atomic_file(path) as tmp:
        tmp.write_text(settings.model_dump_json(indent=2) + "\n", encoding="utf-8")
