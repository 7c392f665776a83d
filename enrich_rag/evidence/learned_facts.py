"""Learned facts: a grounded hop kept as a fact of the graph, so that the next question asking it is
not worked out again.

A hop whose read states its answer is a sub-question, an answer and the passage that states it, worked
out by the reader at the cost of a call. It is kept as one edge: the entity the sub-question names ->
the sub-question (its relation) -> the answer, with the sentence that states it as evidence, that
passage's chunk, `learned:<reader>` as extractor and 1 / perplexity as confidence. A question answered
whole and grounded is kept the same way. An answer's facts go to the graph together, in one `learned-`
partition through the commit protocol (a queued job by default, so the answer does not wait).

A later hop looks its sub-question up first (one DuckDB query over the learned edges of the entities it
names, or of the same sub-question): the same sub-question learned surely (its perplexity under the
threshold) is answered from the record, without a reader call and cited to its chunk; a similar one
(the same subject and most of the same words) has its cited passage read first, before any search.
Learned facts are undone a partition at a time (`graph rollback`) or one at a time (`graph forget`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from enrich_rag.evidence.quote import quote
from enrich_rag.extract.assemble import graph_tables
from enrich_rag.extract.base import Extraction
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.partitions import GraphTables
from enrich_rag.storage.schema import Edge
from enrich_rag.text import content_words, normalize_answer, states

LEARNED = "learned"  # the partitions' prefix and the extractor's: learned:<reader>
EVIDENCE_CHARS = 300
# Stopwords to a search, but what a question asks: two questions asking different ones never match.
QUESTION_WORDS = frozenset({"who", "whom", "whose", "what", "when", "where", "which", "why", "how", "many", "much", "year", "old"})
_WORD = re.compile(r"[a-z]+")
_NAME = re.compile(r"^\w[\w .,'&+-]*[\w.+]$|^\w$")


@dataclass(frozen=True)
class Recall:
    """A learned fact found for a question: `match` 1.0 is the same question, else the share of words."""

    fact: Edge
    match: float

    @property
    def exact(self) -> bool:
        return self.match == 1.0

    @property
    def perplexity(self) -> float:
        return 1.0 / self.fact.confidence if self.fact.confidence > 0 else math.inf

    def record(self) -> dict[str, Any]:
        return {
            "fact": self.fact.id,
            "question": self.fact.relation,
            "answer": self.fact.object,
            "chunk_id": self.fact.chunk_id,
            "partition": self.fact.partition,
            "match": round(self.match, 3),
        }


def question_key(question: str) -> str:
    return normalize_answer(question)


def asks(question: str) -> frozenset[str]:
    """What a question asks, by its question words: "When was X born?" is not "Where was X born?"."""
    return frozenset(_WORD.findall(question.casefold())) & QUESTION_WORDS


def learned_fact(
    question: str, answer: str, perplexity: float, evidence: Sequence[Any], subjects: Sequence[str], reader: str
) -> Edge | None:
    """The fact a grounded read teaches, or None: no line it read states the answer (evidence/quote.py), or
    the question names no entity of its parse or the graph (`subjects`) but the answer. Its subject is the
    first such entity, never a piece of the question's text ("What does dvc gc do", "Errno 24] Too"), and
    its evidence and chunk are the line that states the answer."""
    line = quote(answer, evidence, question)
    named = (s for s in subjects if is_name(s) and states(question, s) and not states(s, answer) and not states(answer, s))
    subject = next(named, None)
    if line is None or subject is None or not math.isfinite(perplexity) or perplexity <= 0:
        return None
    return Edge(
        subject,
        " ".join(question.split()),
        answer,
        evidence=line.text[:EVIDENCE_CHARS],
        chunk_id=line.chunk_id,
        doc_id=line.doc_id,
        confidence=round(min(1.0, 1.0 / perplexity), 4),
        extractor=f"{LEARNED}:{reader}",
    )


def is_name(entity: str) -> bool:
    """A name a fact can be about: words, not a number nor a fragment cut at a bracket or a slash."""
    return bool(_NAME.match(entity.strip())) and any(ch.isalpha() for ch in entity)


def learned_tables(facts: Sequence[Edge]) -> GraphTables:
    """An answer's facts as one partition's rows: the edges and their two end nodes."""
    return graph_tables(Extraction(edges=list(facts)))


def recall(
    store: GraphStore,
    question: str,
    entities: Sequence[str],
    min_match: float,
    exclude: Sequence[str] = (),
    similar: Callable[[str], list[str]] | None = None,
) -> Recall | None:
    """The learned fact that best answers `question`: the same question first, then one that asks the
    same (`asks`) and shares at least `min_match` of the content words (Jaccard), its answer not one of
    `exclude` (a chain's earlier answers). Candidates: the learned facts about an entity it names or of
    the same question (DuckDB), and the edge ids `similar` finds for it (the graph index). Ties go to
    the surer record."""
    if not store.has_edges_from(LEARNED):
        return None
    key, words, wanted = question_key(question), content_words(question), asks(question)
    subjects = [node_id(e) for e in entities]
    excluded = {normalize_answer(a) for a in exclude}
    found = store.learned_edges(LEARNED, subjects, key, ids=similar(question) if similar else [])
    best: Recall | None = None
    for row in found:
        fact = Edge.from_row(row)
        if normalize_answer(fact.object) in excluded:
            continue
        if question_key(fact.relation) == key:
            match = 1.0
        elif asks(fact.relation) != wanted:
            continue
        else:
            theirs = content_words(fact.relation)
            match = min(len(words & theirs) / len(words | theirs) if words | theirs else 0.0, 0.999)  # only the same question is exact
        if match >= min_match and (best is None or (match, fact.confidence) > (best.match, best.fact.confidence)):
            best = Recall(fact, match)
    return best


def learned_rows(store: GraphStore) -> list[dict[str, Any]]:
    """Every learned fact the graph holds (forgotten ones are hidden), newest partition first."""
    return store.learned_edges(LEARNED)


def learned_record(row: dict[str, Any]) -> dict[str, Any]:
    """One learned fact as `graph learned` and the API list it."""
    return {
        "id": row["id"],
        "subject": row["src_name"],
        "question": row["relation"],
        "answer": row["dst_name"],
        "chunk_id": row["chunk_id"],
        "reader": row["extractor"].split(":", 1)[1],
        "confidence": round(float(row["confidence"]), 4),
        "partition": row["partition"],
    }
