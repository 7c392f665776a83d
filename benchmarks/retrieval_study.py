"""What the retrieval-only studies (no reader) share: the built dataset and its questions with gold passages."""

from __future__ import annotations

from pathlib import Path

from enrich_rag.config import Config, EvalConfig
from enrich_rag.eval.prepare import sampled_questions
from enrich_rag.eval.runner import ensure_built, load_eval


def retrieval_study(params: Path | str, overlay: Path | str, limit: int = 0) -> tuple[Config, EvalConfig, list]:
    """What the retrieval-only studies (no reader) start from: the built dataset and its sampled
    questions that have gold passages, in the evaluation's fixed order."""
    config, ev = load_eval(params, overlay)
    ensure_built(config, ev)
    return config, ev, [i for i in sampled_questions(ev)[: limit or None] if i.has_gold]
