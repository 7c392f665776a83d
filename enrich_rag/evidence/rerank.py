"""Rerankers for the top-K candidates; the best `k` go to the generator.

`entity` (default) is the entity-first hybrid score: free, and it knows which entities matter.
`llm` asks the configured LLM whether a passage helps and scores log P(" Yes"): real relevance
judgement from any backend, at one forward pass per candidate. Any other value is a cross-encoder
(hub name or local folder) run through transformers, for users who have one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from enrich_rag.errors import ModelLoadError
from enrich_rag.evidence.entity_ranker import EntityFirstRanker
from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import relevance_prompt
from enrich_rag.storage.passages import Passage

Reranker = Callable[[str, Sequence[Passage], Sequence[str]], list[float]]
PASSAGE_CHARS = 600


def ranker_view(passage: Passage) -> dict[str, Any]:
    """A passage as the entity-first ranker reads it (a dict); the title is a field of its own, counted once."""
    return {"id": passage.id, "title": passage.title, "content": passage.text, "score": passage.score, "passage": passage}


def entity_reranker(ranker: EntityFirstRanker) -> Reranker:
    return lambda question, chunks, entities: [ranker.score(ranker_view(c), entities) for c in chunks]


def retrieval_reranker(question: str, chunks: Sequence[Passage], entities: Sequence[str]) -> list[float]:
    return [c.score for c in chunks]


def llm_reranker(llm: LLM) -> Reranker:
    def rerank(question: str, chunks: Sequence[Passage], entities: Sequence[str]) -> list[float]:
        return [sum(llm.score(relevance_prompt(question, _passage(c)), " Yes")) for c in chunks]

    return rerank


def cross_encoder_reranker(model: str) -> Reranker:
    import torch
    import transformers

    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(model)
        encoder = transformers.AutoModelForSequenceClassification.from_pretrained(model).eval()
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot load cross-encoder '{model}': {exc}".splitlines()[0]) from exc

    def rerank(question: str, chunks: Sequence[Passage], entities: Sequence[str]) -> list[float]:
        if not chunks:
            return []
        batch = tokenizer(
            [question] * len(chunks), [_passage(c) for c in chunks], truncation=True, padding=True, max_length=256, return_tensors="pt"
        )
        with torch.inference_mode():
            logits = encoder(**batch).logits
        return (logits[:, -1] if logits.shape[-1] > 1 else logits[:, 0]).tolist()

    return rerank


def _passage(chunk: Passage) -> str:
    return chunk.content[:PASSAGE_CHARS]


def make_reranker(name: str, ranker: EntityFirstRanker, llm: Callable[[], LLM]) -> Reranker:
    """`llm` is a thunk so the entity and retrieval rerankers never load a model."""
    if name == "entity":
        return entity_reranker(ranker)
    if name == "none":
        return retrieval_reranker
    if name == "llm":
        return llm_reranker(llm())
    return cross_encoder_reranker(name)
