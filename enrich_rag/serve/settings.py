"""The web page's saved settings: an overlay on params.yaml, checked by the config's own rules.

The page may change a few retrieval and enrichment keys. What it saves is a YAML overlay
(`<paths.root>/web_settings.yaml`, the shape of params.yaml: `agent:` and `evidence:` sections), checked
by the same `config.check_field` as params.yaml and a configs/ overlay, with tighter maxima so one
question from the page stays within the server's time limit. `GET /api/settings` and the page show the
overlay beside the values it sets; nothing overrides params.yaml without being shown.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

from enrich_rag.config import AgentConfig, Config, EvidenceConfig, check_field
from enrich_rag.errors import ConfigError
from enrich_rag.storage.atomic import atomic_file

SETTINGS_FILE = "web_settings.yaml"
WEB_KEYS = {
    "agent": ("allow_enrich", "max_iterations", "ppl_threshold", "max_enrich_rounds", "enrich_chunks", "abstain", "sure_confidence"),
    "evidence": ("selection", "fact_lines", "k", "candidates", "rerank", "micro_queries", "bridges", "rounds"),
}
_CLASSES = {"agent": AgentConfig, "evidence": EvidenceConfig}
# Tighter maxima than params.yaml allows, so that one question from the page stays within the
# server's time limit on a 2-core machine (`python -m benchmarks load_test --maxima` times a question at these caps).
WEB_MAXIMA = {"max_iterations": 3, "max_enrich_rounds": 1, "enrich_chunks": 4, "candidates": 20, "rounds": 2}
# A cross-encoder path in params.yaml is not offered on the page: only the fixed choices.
WEB_RERANK = ("entity", "none", "llm")


def section_of(key: str) -> str:
    for section, keys in WEB_KEYS.items():
        if key in keys:
            return section
    allowed = ", ".join(k for keys in WEB_KEYS.values() for k in keys)
    raise ConfigError(f"web setting '{key}' is not one the page may change (allowed: {allowed})")


def check(flat: dict[str, Any], where: str = "web setting") -> dict[str, dict[str, Any]]:
    """A flat update from the page ({"k": 3}) as a checked overlay ({"evidence": {"k": 3}}); one line if wrong."""
    if not isinstance(flat, dict):
        raise ConfigError(f"{where}: expected a mapping of settings to values, got {flat!r}")
    overlay: dict[str, dict[str, Any]] = {}
    for key, value in flat.items():
        section = section_of(key)
        f = next(f for f in dataclasses.fields(_CLASSES[section]) if f.name == key)
        value = check_field(section, f, value)
        if key in WEB_MAXIMA and value > WEB_MAXIMA[key]:
            raise ConfigError(f"{section}.{key} must be <= {WEB_MAXIMA[key]} on the web page, got {value!r}")
        if key == "rerank" and value not in WEB_RERANK:
            raise ConfigError(f"evidence.rerank must be one of {', '.join(WEB_RERANK)} on the web page, got {value!r}")
        overlay.setdefault(section, {})[key] = value
    return overlay


def flatten(overlay: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {k: v for section in overlay.values() for k, v in section.items()}


def apply(config: Config, overlay: dict[str, dict[str, Any]]) -> Config:
    return dataclasses.replace(config, **{s: dataclasses.replace(getattr(config, s), **values) for s, values in overlay.items()})


def effective(config: Config, overlay: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The values a question from the page runs with: params.yaml, capped for the page, then the overlay."""
    out = {k: getattr(getattr(config, s), k) for s, keys in WEB_KEYS.items() for k in keys}
    out |= {k: min(out[k], cap) for k, cap in WEB_MAXIMA.items()}
    if out["rerank"] not in WEB_RERANK:
        out["rerank"] = "entity"
    return out | flatten(overlay)


def load(path: Path) -> dict[str, dict[str, Any]]:
    """The saved overlay; a damaged or hand-edited file is one line naming it, never a traceback."""
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not readable YAML ({exc.__class__.__name__}); fix or delete the file") from exc
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ConfigError(f"{path}: expected sections of settings (agent:, evidence:); fix or delete the file")
    try:
        overlay = check(flatten(data), str(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc} (fix or delete the file; the page writes it again)") from exc
    misplaced = [f"{s}.{k}" for s, values in data.items() for k in values if section_of(k) != s]
    if misplaced:
        raise ConfigError(f"{path}: {', '.join(misplaced)} is in the wrong section (fix or delete the file)")
    return overlay


def save(path: Path, overlay: dict[str, dict[str, Any]]) -> None:
    if not overlay:
        path.unlink(missing_ok=True)
        return
    with atomic_file(path) as tmp:
        tmp.write_text(
            "# Saved by the web page: an overlay on params.yaml (GET /api/settings shows it)\n" + yaml.safe_dump(overlay, sort_keys=True),
            encoding="utf-8",
        )
