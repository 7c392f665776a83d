"""What an answer cites: the passages and graph facts it was read from, each to its chunk and partition.

A passage and a fact are cited as different things (a passage by its title, a fact by its triple). A
planned question's hop answers are not sources: they are shown in the answer's chain, never here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from enrich_rag.evidence.lines import Evidence
from enrich_rag.storage.passages import Passage

HOP_FACT_PREFIX = "hop:"  # the id of a hop's answer written as a fact line for a composing read (agent/hops.py)


@dataclass(frozen=True)
class PassageCitation:
    kind: ClassVar[str] = "passage"
    chunk_id: str
    doc_id: str
    evidence: str  # the passage's text
    partition: str
    title: str

    @property
    def source(self) -> str:
        return self.title

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind} | asdict(self)


@dataclass(frozen=True)
class FactCitation:
    kind: ClassVar[str] = "fact"
    chunk_id: str
    doc_id: str
    evidence: str  # the sentence that states the fact
    partition: str
    fact: str  # subject relation object

    @property
    def source(self) -> str:
        return self.fact

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind} | asdict(self)


Citation = PassageCitation | FactCitation


def cite(source: Evidence) -> Citation:
    if isinstance(source, Passage):
        return PassageCitation(source.id, source.doc_id, source.content, partition=source.partition, title=source.title)
    return FactCitation(source.chunk_id, source.doc_id, source.evidence, partition=source.partition, fact=source.triple)


def citations(evidence: Iterable[Evidence]) -> list[Citation]:
    """The sources among what was read: a hop's answer, read back as a fact line, is left out."""
    return [cite(e) for e in evidence if isinstance(e, Passage) or not e.id.startswith(HOP_FACT_PREFIX)]


def citation_from_dict(data: dict[str, Any]) -> Citation:
    fields = {k: v for k, v in data.items() if k != "kind"}
    return FactCitation(**fields) if data.get("kind") == "fact" else PassageCitation(**fields)
