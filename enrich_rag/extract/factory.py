"""Pick an extractor by name (`extraction.extractor` for the seed, `extraction.deep` for EnrichGraph),
importing only what it needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from enrich_rag.config import ExtractionConfig
from enrich_rag.errors import ConfigError
from enrich_rag.extract.base import Extractor

EXTRACTORS = ("spacy", "rebel", "llm")


def make_extractor(
    config: ExtractionConfig, name: str = "", llm: Callable[[], Any] | None = None, prompt: Callable[[str, str], Any] | None = None
) -> Extractor:
    """`name`: default the seed's extractor; `llm` and `prompt`: the reader and its fact prompt, for the
    deep LLM extractor (the agent, one layer up, hands them down)."""
    name = name or config.extractor
    if name == "spacy":
        from enrich_rag.extract.spacy_extractor import SpacyExtractor

        return SpacyExtractor(config)
    if name == "rebel":
        from enrich_rag.extract.rebel import RebelExtractor

        return RebelExtractor(config)
    if name == "llm" and llm is not None and prompt is not None:
        from enrich_rag.extract.llm_extractor import LLMExtractor

        return LLMExtractor(llm(), prompt, config.deep_max_facts)
    raise ConfigError(f"unknown extractor '{name}' (expected one of: {', '.join(EXTRACTORS)}; llm only for extraction.deep)")
