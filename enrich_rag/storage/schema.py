"""Arrow schemas of everything the build writes: chunks, graph nodes, graph edges, entity-passage links."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from enrich_rag.errors import StorageError

CHUNKS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("title", pa.string()),
        ("section", pa.string()),
        ("position", pa.int32()),
        ("text", pa.string()),
    ]
)

NODES = pa.schema(
    [
        ("id", pa.string()),
        ("name", pa.string()),
        ("type", pa.string()),
        ("description", pa.string()),
        ("aliases", pa.list_(pa.string())),
    ]
)

EDGES = pa.schema(
    [
        ("id", pa.string()),
        ("src", pa.string()),
        ("dst", pa.string()),
        # End names are copied onto the edge so a 1-hop query needs no second lookup for names.
        ("src_name", pa.string()),
        ("dst_name", pa.string()),
        ("relation", pa.string()),
        ("evidence", pa.string()),
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("confidence", pa.float32()),
        ("extractor", pa.string()),
    ]
)

# Provenance: which passages mention which entity. Passages are graph nodes through these rows
# (PageRank walks entity -> passage -> entity); `is_title` marks the passage that is about the entity.
LINKS = pa.schema(
    [
        ("node", pa.string()),
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("count", pa.int32()),
        ("is_title", pa.bool_()),
    ]
)


@dataclass(frozen=True)
class Edge:
    """One fact, the same object from extraction to citation: the triple, its evidence sentence and chunk.

    Extractors fill the triple and its provenance; assembly gives it ids (`EDGES` rows); the graph
    store adds the partition it was read from; retrieval a score.
    """

    subject: str
    relation: str
    object: str
    evidence: str
    chunk_id: str
    doc_id: str
    sentence_index: int = 0
    confidence: float = 1.0
    extractor: str = ""
    id: str = ""
    src: str = ""  # node ids
    dst: str = ""
    partition: str = ""
    score: float = 0.0

    @property
    def triple(self) -> str:
        return f"{self.subject} {self.relation} {self.object}"

    def to_row(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "src": self.src,
            "dst": self.dst,
            "src_name": self.subject,
            "dst_name": self.object,
            "relation": self.relation,
            "evidence": self.evidence,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "confidence": self.confidence,
            "extractor": self.extractor,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any], score: float = 0.0) -> Edge:
        return cls(
            row["src_name"],
            row["relation"],
            row["dst_name"],
            row["evidence"],
            row["chunk_id"],
            row["doc_id"],
            confidence=float(row["confidence"]),
            extractor=row["extractor"],
            id=row["id"],
            src=row["src"],
            dst=row["dst"],
            partition=row.get("partition", ""),
            score=score,
        )


SEED_PARTITION = "seed"

# Relation vocabulary beyond the extracted verbs. Structural edges carry no text past their two end
# names: the graph index leaves them out and PCST makes them cost a little more.
COOCCURS = "co-occurs with"
MENTIONS = "mentions"
STRUCTURAL_RELATIONS = (COOCCURS, MENTIONS)
_PARTITION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_partition_id(partition: str) -> str:
    """Partition ids become directory names: no separators, no '..', no hidden names."""
    if not isinstance(partition, str) or not _PARTITION_ID.match(partition) or ".." in partition:
        raise StorageError(f"invalid partition id {partition!r} (letters, digits, '.', '_', '-' only)")
    return partition
