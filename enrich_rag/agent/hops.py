"""One hop of a plan: its sub-question filled with the earlier answers, what it read, its answer, and
whether that answer is grounded (stated by what the hop read).

A chain's answer is its last hop's; a plan of side-by-side hops (and a comparison) is composed by one
final read over the hops' answers, each a cited fact line, and the passages they came from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.agent.sufficiency import Sufficiency, recorded
from enrich_rag.evidence.citations import HOP_FACT_PREFIX
from enrich_rag.evidence.enrich_context import Subgraph
from enrich_rag.evidence.lines import Evidence, reading_line
from enrich_rag.evidence.query_analysis import SINGLE_HOP, QueryAnalysis
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge
from enrich_rag.text import YES_NO, asks_yes_no, normalize_answer, states

HOP_RELATION = "is answered by"


def grounded(result: Sufficiency, question: str, earlier: Sequence[str] = ()) -> bool:
    """What the hop read states its answer (a span of a passage or a fact line), and the answer is not
    what the hop asked about (the sub-question's own subject read back) nor, in a chain, an `earlier` hop's
    answer (a chain moves on at every hop; a plan that lost its slot reads the last answer back). A yes or
    no cannot be a span: it counts as grounded when something was read and the hop asked a yes/no
    question ("Who is the spouse of X?" -> "No" is a reader that found nothing, not an answer)."""
    answer = normalize_answer(result.answer)
    if not answer:
        return False
    if answer in YES_NO:
        return bool(result.evidence) and asks_yes_no(question)
    if states(question, result.answer) or answer in {normalize_answer(a) for a in earlier}:
        return False
    return read_states_answer(result)


def read_states_answer(result: Sufficiency) -> bool:
    """What was read states the answer: a span of a passage or a fact line (a yes or no: something was
    read). A comparison's answer names one of the question's sides, so a whole read is checked by this
    alone."""
    answer = normalize_answer(result.answer)
    if not answer:
        return False
    if answer in YES_NO:
        return bool(result.evidence)
    return any(states(reading_line(e), result.answer) for e in result.evidence)


def same_answer(a: str, b: str) -> bool:
    """Two readings name the same thing: equal once normalised, or one says the other ("Parker" and
    "Jennifer Parker")."""
    return bool(normalize_answer(a)) and bool(normalize_answer(b)) and (states(a, b) or states(b, a))


@dataclass
class Hop:
    index: int  # 1-based, as the plan's #n
    question: str  # the sub-question, its slots filled
    answer: str
    perplexity: float
    grounded: bool
    evidence: tuple[Evidence, ...] = ()
    subgraph: Subgraph = field(default_factory=Subgraph)
    learned: str = ""  # the learned fact it was answered or read from (evidence/learned_facts.py)
    entities: tuple[str, ...] = ()  # what its sub-question names: a learned fact's subject

    @property
    def passages(self) -> list[Passage]:
        return [e for e in self.evidence if isinstance(e, Passage)]

    def fact(self) -> Edge:
        """The hop's answer as a fact line, cited to the passage that states it (else the first it read)."""
        source = next((e for e in self.evidence if states(reading_line(e), self.answer)), self.evidence[0] if self.evidence else None)
        chunk, doc = (source.id, source.doc_id) if isinstance(source, Passage) else (getattr(source, "chunk_id", ""), "")
        return Edge(
            self.question,
            HOP_RELATION,
            self.answer,
            evidence=f"{self.question} {self.answer}",
            chunk_id=chunk,
            doc_id=doc,
            id=f"{HOP_FACT_PREFIX}{self.index}",
        )

    def record(self) -> dict[str, Any]:
        return {
            "hop": self.index,
            "question": self.question,
            "answer": self.answer,
            "perplexity": recorded(self.perplexity),
            "grounded": self.grounded,
            "chunk_ids": [p.id for p in self.passages],
        } | ({"learned": self.learned} if self.learned else {})


def hop_analysis(analysis: QueryAnalysis, answers: Sequence[str]) -> QueryAnalysis:
    """A hop is single-hop by construction; the earlier answers its question names are its entities
    first (the bridge the graph links)."""
    named = [a for a in answers if a and normalize_answer(a) and states(analysis.question, a)]
    entities = tuple({node_id(e): e for e in [*named, *analysis.entities]}.values())
    return dataclasses.replace(analysis, entities=entities, kind=SINGLE_HOP, parts=())


def chain_evidence(hops: Sequence[Hop]) -> list[Evidence]:
    """What the final read sees: each hop's answer as a fact line, then the passages the hops read."""
    passages = list({p.id: p for hop in hops for p in hop.passages}.values())
    return [*(hop.fact() for hop in hops), *passages]


def merged_subgraph(subgraphs: Sequence[Subgraph], evidence: Sequence[Evidence]) -> Subgraph:
    """The hops' trees drawn as one: every hop's passages are nodes of it."""
    nodes = {n["id"]: n for sub in subgraphs for n in sub.nodes}
    edges = {e["id"]: e for sub in subgraphs for e in sub.edges}
    entry = list(dict.fromkeys(i for sub in subgraphs for i in sub.entry_ids))
    candidates = (sum(s.candidates[0] for s in subgraphs), sum(s.candidates[1] for s in subgraphs))
    return Subgraph(list(nodes.values()), list(edges.values()), entry, evidence=list(evidence), candidates=candidates)
