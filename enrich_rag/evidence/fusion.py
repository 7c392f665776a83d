"""The search's one order, from the hybrid's and the walk's.

GraphRank's walk finds the second hop of a multi-hop question that the hybrid ranks low, and on
documentation it moves the passage that answers off first place: the entities a parse finds in docs
(`Git`, `npm`) are on every page, so their mass drowns the words of the question. The hybrid's first
passages are therefore kept where they are, and the walk orders the rest; how many are kept is chosen
per kind of corpus (`retrieval.hybrid_first_*`), told apart by the share of chunks under a section
heading. The hybrid itself weighs BM25 by kind too: documentation questions name identifiers
(`--dry`, `show_default`) that match as written. Measured on every set with `python -m benchmarks find`
(bench_results/find_*.json).
"""

from __future__ import annotations

from collections.abc import Sequence

from enrich_rag.config import Config, RetrievalConfig
from enrich_rag.storage.passages import Passage

PAGES, PASSAGES = "pages", "passages"
SECTIONED = 0.5  # documentation: 0.89-1.0 of chunks under a heading; Wikipedia-style sets: 0.0


def corpus_kind(sectioned_share: float) -> str:
    return PAGES if sectioned_share >= SECTIONED else PASSAGES


def hybrid_first(config: RetrievalConfig, kind: str) -> int:
    """How many of the hybrid's first passages the walk may not move down, for this kind of corpus."""
    return config.hybrid_first_pages if kind == PAGES else config.hybrid_first_passages


def dense_weight(config: Config, kind: str) -> float:
    """The corpus hybrid's dense weight for this kind of corpus."""
    return config.retrieval.dense_weight_pages if kind == PAGES else config.embeddings.dense_weight


def followed_first(config: RetrievalConfig, kind: str) -> int:
    """How many pages the first passage links to are read right after it, for this kind of corpus."""
    return config.follow_first_pages if kind == PAGES else config.follow_first_passages


def linked_pages(named: Sequence[Passage], mass: dict[str, float], n: int) -> list[Passage]:
    """Of the chunks of the pages a passage names (`named`, in the order it names them), one per page,
    the walk's heaviest chunk, and of those the walk's heaviest `n` pages (the first named where the
    walk did not reach them): the second hop of a bridge question is often the page its first hop's
    passage names, and the walk ranks it below passages that share the question's words."""
    best: dict[str, Passage] = {}
    for chunk in named:
        if chunk.doc_id not in best or mass.get(chunk.id, 0.0) > mass.get(best[chunk.doc_id].id, 0.0):
            best[chunk.doc_id] = chunk
    return sorted(best.values(), key=lambda chunk: -mass.get(chunk.id, 0.0))[:n]


def fused(walked: Sequence[Passage], hits: Sequence[Passage], keep: int, k: int, followed: Sequence[Passage] = ()) -> list[Passage]:
    """The hybrid's first `keep` passages, the pages the first of them names (`followed`), then the walk's
    order, topped up from the hybrid: the first k. Scores are the order's (1 for the first, falling by
    rank): the lists score on different scales."""
    order: dict[str, Passage] = {}
    for passage in [*hits[:keep], *followed, *walked, *hits[keep:]]:
        order.setdefault(passage.id, passage)
    ranked = list(order.values())[:k]
    return [p.scored(1.0 / (1 + i)) for i, p in enumerate(ranked)]
