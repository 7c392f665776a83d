"""Builds keyed by what they were built from: a stale build is rebuilt, never reused.

Each offline stage records a key (a hash of the settings that shape its output and of the keys of
the stages it reads) in `<paths.root>/build/<stage>.json`, beside its outputs and as one of its DVC
outputs. The keys chain like a Merkle list: chunks <- corpus source content and chunking; the corpus
index <- chunks + embeddings; the seed graph <- chunks + extraction; the graph index <- seed graph +
embeddings. So a changed `extraction.seed_share` in an overlay makes the seed graph and the graph
index stale and nothing else, whichever way the build is started (`dvc repro` or `run_evaluation.py`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from enrich_rag.config import Config, is_uri
from enrich_rag.storage.atomic import atomic_file

# Settings that change how fast a stage runs, never what it writes.
_SPEED_ONLY = {"batch_size"}
# EnrichGraph's extractor, at question time: the seed never reads them.
_DEEP_ONLY = {"deep", "deep_max_facts"}
STAGES = ("prepare", "chunks", "corpus_index", "seed_graph", "graph_index")
# The DVC stage (and `scripts/` wrapper) that builds each one.
STAGE_NAMES = {
    "prepare": "eval_prepare",
    "chunks": "prepare_corpus",
    "corpus_index": "build_corpus_index",
    "seed_graph": "build_seed_graph",
    "graph_index": "build_graph_index",
}
UPSTREAM = {"prepare": None, "chunks": "prepare", "corpus_index": "chunks", "seed_graph": "chunks", "graph_index": "seed_graph"}


def content_digest(path: str) -> str:
    """What a corpus source holds (a file, or a folder's files by relative name); URIs by name only."""
    if is_uri(path):
        return f"uri:{path}"
    p = Path(path)
    if not p.exists():
        return "missing"
    files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    digest = hashlib.sha1()
    for f in files:
        digest.update(str(f.relative_to(p) if p.is_dir() else f.name).encode())
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def _section(obj: Any, ignore: set[str] = _SPEED_ONLY) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(obj).items() if k not in ignore}


def stage_settings(config: Config, stage: str) -> dict[str, Any]:
    """The settings that shape one stage's output, by name (so a stale build can say what changed)."""
    if stage == "prepare":
        ev = config.eval
        return {
            "eval": {
                "dataset": ev.dataset,
                "format": ev.format,
                "sample": ev.sample,
                "seed": ev.seed,
                "corpus": ev.corpus if ev.over_built_corpus else content_digest(ev.corpus) if ev.corpus else "",
                "questions": content_digest(ev.questions),
            }
        }
    if stage == "chunks":
        corpus = _section(config.corpus) | {"source": content_digest(config.corpus.source)}
        return {"corpus": corpus}
    if stage == "corpus_index" or stage == "graph_index":
        return {"embeddings": _section(config.embeddings)}
    if stage == "seed_graph":
        return {"extraction": _section(config.extraction, _SPEED_ONLY | _DEEP_ONLY)}
    raise ValueError(f"unknown stage {stage!r}")


def stamp_path(config: Config, stage: str) -> Path:
    return Path(config.paths.root) / "build" / f"{stage}.json"


def read_stamp(config: Config, stage: str) -> dict[str, Any] | None:
    path = stamp_path(config, stage)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def expected_stamp(config: Config, stage: str) -> dict[str, Any]:
    """The stamp this stage would write now: its settings and the key its upstream stage recorded."""
    upstream = UPSTREAM[stage]
    if upstream == "prepare" and not config.eval.questions:
        upstream = None  # the corpus is the user's own source
    # Questions written over a build (`eval.corpus: built`) read it as it was prepared, by whatever
    # evaluation prepared it (none for the default build): they never make it stale.
    upstream_key = (read_stamp(config, upstream) or {}).get("key", "") if upstream else ""
    settings = json.loads(json.dumps(stage_settings(config, stage), default=str))  # as it reads back (tuples as lists)
    key = hashlib.sha1(json.dumps([upstream_key, settings], sort_keys=True, default=str).encode()).hexdigest()[:16]
    return {"stage": stage, "key": key, "upstream": upstream_key, "settings": settings}


def write_stamp(config: Config, stage: str) -> dict[str, Any]:
    stamp = expected_stamp(config, stage)
    path = stamp_path(config, stage)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as tmp:
        Path(tmp).write_text(json.dumps(stamp, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return stamp


def _changed(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    keys = sorted(set(old) | set(new))
    out: list[str] = []
    for k in keys:
        a, b = old.get(k), new.get(k)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _changed(a, b, f"{prefix}{k}.")
        elif a != b:
            out.append(f"{prefix}{k}")
    return out


def staleness(config: Config, stage: str) -> str | None:
    """None when the recorded build matches the settings now; else why it is stale, in a few words."""
    recorded = read_stamp(config, stage)
    if recorded is None:
        return "never built with a recorded key"
    expected = expected_stamp(config, stage)
    if recorded.get("key") == expected["key"]:
        return None
    changed = _changed(recorded.get("settings", {}), expected["settings"])
    if changed:
        return "changed: " + ", ".join(changed)
    return f"its input ({UPSTREAM[stage]}) was rebuilt"


def build_key(config: Config) -> str:
    """One key for the whole build an answer reads (both indexes and the seed graph)."""
    parts = [(read_stamp(config, s) or {}).get("key", "") for s in ("corpus_index", "graph_index")]
    return hashlib.sha1("/".join(parts).encode()).hexdigest()[:12]
