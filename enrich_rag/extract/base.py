"""The extractor seam: a pure function of a batch of chunks, returning mentions and triples.

No extractor touches storage or global state, so the same `extract` can be mapped over a cluster
(Ray Data `map_batches`, Dask `map_partitions`) and the rows reduced by node id afterwards
(`enrich_rag.extract.assemble`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class ChunkInput:
    chunk_id: str
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class Mention:
    """An entity seen in a chunk, already resolved to its canonical surface name in that chunk."""

    name: str
    type: str
    chunk_id: str
    sentence: str
    alias: str  # the surface form actually written


@dataclass(frozen=True)
class Triple:
    subject: str
    relation: str
    object: str
    evidence: str
    chunk_id: str
    doc_id: str
    sentence_index: int
    confidence: float
    extractor: str


@dataclass
class Extraction:
    mentions: list[Mention] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)

    def extend(self, other: "Extraction") -> None:
        self.mentions.extend(other.mentions)
        self.triples.extend(other.triples)


class Extractor(Protocol):
    name: str

    def extract(self, chunks: list[ChunkInput]) -> Extraction: ...
