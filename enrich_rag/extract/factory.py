"""Pick the extractor named in params.yaml (`extraction.extractor`), importing only what it needs."""

from __future__ import annotations

from enrich_rag.config import ExtractionConfig
from enrich_rag.errors import ConfigError
from enrich_rag.extract.base import Extractor

EXTRACTORS = ("spacy", "rebel")


def make_extractor(config: ExtractionConfig) -> Extractor:
    if config.extractor == "spacy":
        from enrich_rag.extract.spacy_extractor import SpacyExtractor

        return SpacyExtractor(config)
    if config.extractor == "rebel":
        from enrich_rag.extract.rebel import RebelExtractor

        return RebelExtractor(config)
    # An LLM extractor (GGUF / OpenAI-compatible server) plugs in here with the agent's LLM backends.
    raise ConfigError(f"unknown extraction.extractor '{config.extractor}' (expected one of: {', '.join(EXTRACTORS)})")
