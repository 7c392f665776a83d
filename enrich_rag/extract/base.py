"""The extractor seam: a pure function of a batch of chunks, returning mentions and edges.

No extractor touches storage or global state, so the same `extract` can be mapped over a cluster
(Ray Data `map_batches`, Dask `map_partitions`) and the rows reduced by node id afterwards
(`enrich_rag.extract.assemble`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge


@dataclass(frozen=True)
class Mention:
    """An entity seen in a chunk, already resolved to its canonical surface name in that chunk."""

    name: str
    type: str
    chunk_id: str
    sentence: str
    alias: str  # the surface form actually written
    doc_id: str = ""


@dataclass
class Extraction:
    mentions: list[Mention] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)  # without ids: assembly gives them

    def extend(self, other: Extraction) -> None:
        self.mentions.extend(other.mentions)
        self.edges.extend(other.edges)


class Extractor(Protocol):
    name: str

    def extract(self, chunks: list[Passage]) -> Extraction: ...
