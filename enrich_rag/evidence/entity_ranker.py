"""SEAL-RAG style entity-first ranking and fixed-k replacement (the entity-first ranker spec in context/README.md).

A chunk is worth its slot when it covers an entity the evidence still lacks, not when it is merely
similar to the question; so the budget is fixed and a weak chunk is swapped out only when a new one
covers more of the missing entities by more than `replacement_threshold`.
Chunks are dicts with `content` (and optionally `title`, `score` from retrieval, `id`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from enrich_rag.text import mention_offsets, mentions, title_match

Chunk = dict[str, Any]


def _text(chunk: Chunk) -> str:
    title = chunk.get("title") or ""
    return f"{title} {chunk.get('content', '')}" if title else str(chunk.get("content", ""))


def salience(text: str, entities: Sequence[str]) -> float:
    """Position and frequency: an entity named early and often is what the chunk is about."""
    if not entities or not text:
        return 0.0
    folded = text.casefold()
    total = 0.0
    for entity in entities:
        hits = mention_offsets(text, entity)
        if hits:
            position = 1.0 - hits[0] / max(len(folded), 1)
            frequency = min(len(hits), 3) / 3
            total += 0.7 * position + 0.3 * frequency
    return total / len(entities)


def naming(title: str, entities: Sequence[str]) -> float:
    """Share of the entities whose own page this is, by title."""
    return sum(title_match(title, e) for e in entities) / len(entities) if entities and title else 0.0


def mentioned(chunk: Chunk, entity: str) -> bool:
    return mentions(_text(chunk), entity)


class EntityFirstRanker:
    """`covers(chunk, entity)` decides coverage; by default a mention anywhere in title or text."""

    def __init__(
        self,
        replacement_threshold: float = 0.1,
        coverage_weight: float = 1.0,
        salience_weight: float = 0.25,
        retrieval_weight: float = 0.5,
        covers: Callable[[Chunk, str], bool] = mentioned,
        title_weight: float = 0.0,
    ):
        self.replacement_threshold = replacement_threshold
        self.coverage_weight = coverage_weight
        self.salience_weight = salience_weight
        self.retrieval_weight = retrieval_weight
        self.covers = covers
        self.title_weight = title_weight

    def compute_entity_coverage(self, chunk: Chunk, target_entities: Sequence[str]) -> tuple[float, list[str]]:
        if not target_entities:
            return 0.0, []
        found = [e for e in target_entities if self.covers(chunk, e)]
        return len(found) / len(target_entities), found

    def score(self, chunk: Chunk, entities: Sequence[str]) -> float:
        """Hybrid score: entity coverage + salience + the retriever's own (normalised) score, and, where
        titles name entities, how much the chunk is an entity's own page."""
        coverage, _ = self.compute_entity_coverage(chunk, entities)
        return (
            self.coverage_weight * coverage
            + self.salience_weight * salience(_text(chunk), entities)
            + self.retrieval_weight * float(chunk.get("score", 0.0))
            + self.title_weight * naming(chunk.get("title") or "", entities)
        )

    def rank_by_entity_coverage(self, chunks: Sequence[Chunk], entities: Sequence[str], top_k: int) -> list[Chunk]:
        scored = sorted(enumerate(chunks), key=lambda ic: (-self.score(ic[1], entities), ic[0]))
        return [c for _, c in scored[:top_k]]

    def _unique_coverage(self, chunks: Sequence[Chunk], index: int, entities: Sequence[str]) -> float:
        """Share of `entities` that only chunks[index] covers: what removing it would lose."""
        if not entities:
            return 0.0
        others = [c for i, c in enumerate(chunks) if i != index]
        lost = [e for e in entities if self.covers(chunks[index], e) and not any(self.covers(c, e) for c in others)]
        return len(lost) / len(entities)

    def _weakest(self, chunks: Sequence[Chunk], entities: Sequence[str]) -> tuple[int, float]:
        losses = [(self._unique_coverage(chunks, i, entities), float(c.get("score", 0.0)), i) for i, c in enumerate(chunks)]
        loss, _, index = min(losses)
        return index, loss

    def find_replacement_candidates(
        self, current_chunks: Sequence[Chunk], new_chunks: Sequence[Chunk], missing_entities: Sequence[str]
    ) -> list[tuple[int, Chunk, float]]:
        """(index of the current chunk to drop, new chunk, coverage improvement), best first."""
        if not current_chunks:
            return []
        index, loss = self._weakest(current_chunks, missing_entities)
        out = []
        for chunk in new_chunks:
            gain = self.compute_entity_coverage(chunk, missing_entities)[0] - loss
            if gain > self.replacement_threshold:
                out.append((index, chunk, gain))
        return sorted(out, key=lambda t: -t[2])

    def replace_chunks(
        self,
        current_chunks: Sequence[Chunk],
        new_chunks: Sequence[Chunk],
        missing_entities: Sequence[str],
        budget: int,
        keep_entities: Sequence[str] = (),
    ) -> tuple[list[Chunk], list[str]]:
        """Fill free slots, then swap the weakest chunk, one new chunk at a time, never past `budget`.

        `keep_entities` are already covered; a swap may not drop the only chunk covering one.
        """
        selected = list(current_chunks)[:budget]
        pending = sorted(new_chunks, key=lambda c: -self.compute_entity_coverage(c, missing_entities)[0])
        protected = list(dict.fromkeys([*missing_entities, *keep_entities]))
        for chunk in pending:
            still = self._still_missing(selected, missing_entities)
            if not still:
                break
            if any(chunk is c or (chunk.get("id") is not None and chunk.get("id") == c.get("id")) for c in selected):
                continue
            gain = len(self.compute_entity_coverage(chunk, still)[1]) / len(protected)
            if gain <= self.replacement_threshold:
                continue
            if len(selected) < budget:
                selected.append(chunk)
                continue
            index, loss = self._weakest(selected, protected)
            if gain - loss > self.replacement_threshold:
                selected[index] = chunk
        return selected, self._still_missing(selected, missing_entities)

    def _still_missing(self, chunks: Sequence[Chunk], entities: Sequence[str]) -> list[str]:
        return [e for e in entities if not any(self.covers(c, e) for c in chunks)]
