"""Retrieval without the reader: the corpus search, GraphRank over it, entity-first selection.

The loop's rounds read through it, and so do `EnrichRAG.search` and the benchmarks that study a step."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from enrich_rag.config import Config, EvidenceConfig
from enrich_rag.evidence.fusion import followed_first, fused, hybrid_first, linked_pages
from enrich_rag.evidence.graph_rank import GraphRanking, rank_passages
from enrich_rag.evidence.query_analysis import QueryAnalysis, analyze_query, validate_question
from enrich_rag.evidence.select import RELEVANCE_POOL_FACTOR, Retrieval, Selection, select_evidence
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.passages import Passage, PassageStore


class Opened(Protocol):
    """What a search needs open (`enrich_rag.resources.Resources` is one): the stores, both indexes, the
    parser, and the search objects built once from them."""

    config: Config
    store: GraphStore
    passages: PassageStore

    @property
    def graph_index(self) -> Any: ...

    @property
    def nlp(self) -> Any: ...

    @property
    def corpus_kind(self) -> str: ...

    def title_gazetteer(self) -> Any: ...

    def retrieval(self) -> Retrieval: ...

    def reranker(self, evidence: EvidenceConfig) -> Any: ...


@dataclass(frozen=True)
class Retriever:
    resources: Opened
    evidence: EvidenceConfig

    def search(self, question: str) -> list[Passage]:
        """The round's one corpus search: PageRank's dense seeds and entity-first's candidates both come from it."""
        limit = max(self.resources.config.retrieval.graph_passages, self.evidence.candidates * RELEVANCE_POOL_FACTOR)
        return self.resources.retrieval().corpus(question, limit)

    def retrieve(self, question: str, k: int, graph: bool = True) -> list[Passage]:
        """What the reader would be offered, without the reader: the corpus search re-ranked by GraphRank
        (PageRank over the question's neighbourhood) below the search's first passages (`order`);
        `graph=False`: the hybrid search alone, scores relative to the best passage."""
        question = validate_question(question)
        hits = self.search(question)
        if not graph:
            return hits[:k]
        return self.order(self.rank(analyze_query(question, self.resources.nlp, self.resources.store), hits), hits, k)

    def order(self, ranking: GraphRanking, hits: Sequence[Passage], k: int, followed: Sequence[Passage] | None = None) -> list[Passage]:
        """The search's first k: the hybrid's first passages kept first (as many as this kind of corpus
        keeps), the pages the first of them names (as many as this kind follows), then the walk's order
        (evidence/fusion.py)."""
        keep = hybrid_first(self.resources.config.retrieval, self.resources.corpus_kind)
        followed = self.followed(ranking, hits) if followed is None else followed
        return fused(ranking.passages, hits, keep, k=k, followed=followed)

    def followed(self, ranking: GraphRanking, hits: Sequence[Passage]) -> list[Passage]:
        """The pages the search's first passage names, as many as this kind of corpus follows, one chunk
        each (evidence/fusion.py `linked_pages`): none where the hybrid's first passage is not kept first."""
        config, kind = self.resources.config.retrieval, self.resources.corpus_kind
        keep, follow = hybrid_first(config, kind), followed_first(config, kind)
        if not (follow and keep and hits):
            return []
        first = hits[0]
        titles = [t for t in self.resources.title_gazetteer().named_titles(first.text) if t != first.title]
        by_title: dict[str, list[Passage]] = {}
        for chunk in self.resources.passages.by_titles(titles):
            by_title.setdefault(chunk.title, []).append(chunk)
        named = [chunk for t in titles for chunk in by_title.get(t, ()) if chunk.doc_id != first.doc_id]
        return linked_pages(named, ranking.mass, follow)

    def rank(self, analysis: QueryAnalysis, hits: Sequence[Passage]) -> GraphRanking:
        """GraphRank: one read of the question's neighbourhood, PageRank over it."""
        resources = self.resources
        return rank_passages(
            analysis.question,
            hits,
            store=resources.store,
            graph_index=resources.graph_index,
            passages=resources.passages,
            config=resources.config.retrieval,
            embeddings=resources.config.embeddings,
            query_entities=analysis.entities,
            limit=max(self.evidence.candidates, self.evidence.k),
        )

    def select(
        self, analysis: QueryAnalysis, hits: Sequence[Passage], graph_passages: Sequence[Passage], use_graph: bool, evidence: EvidenceConfig
    ) -> Selection:
        """Entity-first selection over the round's hits; the graph's PageRank passages join its candidate pool."""
        retrieval = self.resources.retrieval()
        if not use_graph:
            retrieval = dataclasses.replace(retrieval, graph=None)
        reranker = self.resources.reranker(evidence)
        return select_evidence(analysis, retrieval, evidence, rerank=reranker, nlp=self.resources.nlp, extra=graph_passages, hits=hits)
