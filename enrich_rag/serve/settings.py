"""Retrieval and enrichment settings the web page may change: validated, persisted, applied.

The fields, their types and bounds come from the config dataclasses (`config.bounded` / `choice`),
so the page can never accept what `params.yaml` would refuse, and a new bound is declared once.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, create_model

from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.storage.atomic import atomic_file

SETTINGS_FILE = "api_settings.json"
AGENT_KEYS = ("allow_enrich", "entry_points", "max_iterations", "ppl_threshold", "max_enrich_rounds", "enrich_chunks")
EVIDENCE_KEYS = ("entity_first", "k", "candidates", "rerank", "micro_queries", "bridges", "rounds")
_TYPES = {"int": int, "float": float, "bool": bool, "str": str}


def _fields(cls: type, keys: tuple[str, ...], optional: bool) -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(cls):
        if f.name not in keys:
            continue
        meta = f.metadata
        # A cross-encoder path in params.yaml is not offered on the page: only the fixed choices.
        kind = Literal[meta["choices"]] if "choices" in meta else _TYPES[str(f.type).split()[0]]
        bounds = {k: meta[k] for k in ("ge", "gt", "le") if k in meta}
        out[f.name] = (Optional[kind], Field(None, **bounds)) if optional else (kind, Field(..., **bounds))
    return out


_STRICT = ConfigDict(extra="forbid")
Settings = create_model("Settings", __config__=_STRICT,
                        **_fields(AgentConfig, AGENT_KEYS, False), **_fields(EvidenceConfig, EVIDENCE_KEYS, False))
SettingsUpdate = create_model("SettingsUpdate", __config__=_STRICT, __doc__="Any subset of `Settings`; unknown keys are an error.",
                              **_fields(AgentConfig, AGENT_KEYS, True), **_fields(EvidenceConfig, EVIDENCE_KEYS, True))


def from_configs(agent: AgentConfig, evidence: EvidenceConfig) -> BaseModel:
    values = {k: getattr(agent, k) for k in AGENT_KEYS} | {k: getattr(evidence, k) for k in EVIDENCE_KEYS}
    if values["rerank"] not in ("entity", "none", "llm"):
        values["rerank"] = "entity"  # a cross-encoder path in params.yaml is not offered on the page
    return Settings(**values)


def apply(settings: BaseModel, agent: AgentConfig, evidence: EvidenceConfig) -> tuple[AgentConfig, EvidenceConfig]:
    data = settings.model_dump()
    return (dataclasses.replace(agent, **{k: data[k] for k in AGENT_KEYS}),
            dataclasses.replace(evidence, **{k: data[k] for k in EVIDENCE_KEYS}))


def load(path: Path, default: BaseModel) -> BaseModel:
    if not path.is_file():
        return default
    return Settings(**(default.model_dump() | json.loads(path.read_text(encoding="utf-8"))))


def save(path: Path, settings: BaseModel) -> None:
    with atomic_file(path) as tmp:
        tmp.write_text(settings.model_dump_json(indent=2) + "\n", encoding="utf-8")
