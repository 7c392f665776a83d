"""The search's one order, from the hybrid's and the walk's.

GraphRank's walk finds the second hop of a multi-hop question that the hybrid ranks low, and on
documentation it moves the passage that answers off first place: the entities a parse finds in docs
(`Git`, `npm`) are on every page, so their mass drowns the words of the question. The hybrid's first
passages are therefore kept where they are, and the walk orders the rest; how many are kept is chosen
per kind of corpus (`retrieval.hybrid_first_*`), told apart by the share of chunks under a section
heading. Measured on every set with `python -m benchmarks find` (bench_results/find_*.json).
"""

from __future__ import annotations

from collections.abc import Sequence

from enrich_rag.config import RetrievalConfig
from enrich_rag.storage.passages import Passage

PAGES, PASSAGES = "pages", "passages"
SECTIONED = 0.5  # documentation: 0.89-1.0 of chunks under a heading; Wikipedia-style sets: 0.0


def corpus_kind(sectioned_share: float) -> str:
    return PAGES if sectioned_share >= SECTIONED else PASSAGES


def hybrid_first(config: RetrievalConfig, kind: str) -> int:
    """How many of the hybrid's first passages the walk may not move down, for this kind of corpus."""
    return config.hybrid_first_pages if kind == PAGES else config.hybrid_first_passages


def fused(walked: Sequence[Passage], hits: Sequence[Passage], keep: int, k: int) -> list[Passage]:
    """The hybrid's first `keep` passages, then the walk's order, topped up from the hybrid: the first k.
    Scores are the order's (1 for the first, falling by rank): the two lists score on different scales."""
    order: dict[str, Passage] = {}
    for passage in [*hits[:keep], *walked, *hits[keep:]]:
        order.setdefault(passage.id, passage)
    ranked = list(order.values())[:k]
    return [p.scored(1.0 / (1 + i)) for i, p in enumerate(ranked)]
