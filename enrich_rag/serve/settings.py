"""Retrieval and enrichment settings the web page may change: validated, persisted, applied.

The fields, their types and bounds come from the config dataclasses (`config.bounded` / `choice`),
so the page can never accept what `params.yaml` would refuse, and a new bound is declared once.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.errors import ConfigError
from enrich_rag.storage.atomic import atomic_file

SETTINGS_FILE = "api_settings.json"
AGENT_KEYS = ("allow_enrich", "entry_points", "max_iterations", "ppl_threshold", "max_enrich_rounds", "enrich_chunks")
EVIDENCE_KEYS = ("entity_first", "k", "candidates", "rerank", "micro_queries", "bridges", "rounds")
_TYPES = {"int": int, "float": float, "bool": bool, "str": str}
# Tighter maxima than params.yaml allows, so that one question from the page stays within the
# server's time limit on a 2-core machine (`scripts/load_test.py --maxima` times a question at these caps).
WEB_MAXIMA = {"entry_points": 16, "max_iterations": 3, "max_enrich_rounds": 1, "enrich_chunks": 4, "candidates": 20, "rounds": 2}


def _fields(cls: type, keys: tuple[str, ...], optional: bool) -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(cls):
        if f.name not in keys:
            continue
        meta = f.metadata
        # A cross-encoder path in params.yaml is not offered on the page: only the fixed choices.
        kind = Literal[meta["choices"]] if "choices" in meta else _TYPES[str(f.type).split()[0]]
        bounds = {k: meta[k] for k in ("ge", "gt", "le") if k in meta}
        if f.name in WEB_MAXIMA:
            bounds["le"] = min(bounds.get("le", WEB_MAXIMA[f.name]), WEB_MAXIMA[f.name])
        out[f.name] = (Optional[kind], Field(None, **bounds)) if optional else (kind, Field(..., **bounds))
    return out


_STRICT = ConfigDict(extra="forbid")
Settings = create_model("Settings", __config__=_STRICT,
                        **_fields(AgentConfig, AGENT_KEYS, False), **_fields(EvidenceConfig, EVIDENCE_KEYS, False))
SettingsUpdate = create_model("SettingsUpdate", __config__=_STRICT, __doc__="Any subset of `Settings`; unknown keys are an error.",
                              **_fields(AgentConfig, AGENT_KEYS, True), **_fields(EvidenceConfig, EVIDENCE_KEYS, True))


def from_configs(agent: AgentConfig, evidence: EvidenceConfig) -> BaseModel:
    values = {k: getattr(agent, k) for k in AGENT_KEYS} | {k: getattr(evidence, k) for k in EVIDENCE_KEYS}
    values |= {k: min(values[k], cap) for k, cap in WEB_MAXIMA.items()}  # params.yaml may go further than the page
    if values["rerank"] not in ("entity", "none", "llm"):
        values["rerank"] = "entity"  # a cross-encoder path in params.yaml is not offered on the page
    return Settings(**values)


def apply(settings: BaseModel, agent: AgentConfig, evidence: EvidenceConfig) -> tuple[AgentConfig, EvidenceConfig]:
    data = settings.model_dump()
    return (dataclasses.replace(agent, **{k: data[k] for k in AGENT_KEYS}),
            dataclasses.replace(evidence, **{k: data[k] for k in EVIDENCE_KEYS}))


def load(path: Path, default: BaseModel) -> BaseModel:
    """The page's saved settings; a damaged or hand-edited file is one line naming it, never a traceback."""
    if not path.is_file():
        return default
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(saved, dict):
            raise ValueError("not a JSON object")
        return Settings(**(default.model_dump() | saved))
    except (ValueError, UnicodeDecodeError) as exc:  # pydantic's ValidationError is a ValueError
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        why = f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else str(exc).splitlines()[0]
        raise ConfigError(f"{path}: {why} (fix or delete the file; the page writes it again)") from exc


def save(path: Path, settings: BaseModel) -> None:
    with atomic_file(path) as tmp:
        tmp.write_text(settings.model_dump_json(indent=2) + "\n", encoding="utf-8")
