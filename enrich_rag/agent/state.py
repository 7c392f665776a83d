"""A question's state while the loop answers it, and what one round of reading found."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.agent.enrich_context import Subgraph
from enrich_rag.agent.records import ContextBuilt
from enrich_rag.agent.sufficiency import Evidence, Sufficiency
from enrich_rag.agent.trace import Trace
from enrich_rag.evidence.graph_rank import GraphRanking
from enrich_rag.evidence.query_analysis import QueryAnalysis
from enrich_rag.storage.passages import Passage


@dataclass
class QuestionState:
    """What every step of the loop is handed for one question, instead of the trace, the read cache and
    the time limit passed one by one."""

    analysis: QueryAnalysis
    trace: Trace
    allow_enrich: bool
    enrich_later: bool = False  # an enrichment is queued to run after the answer, not waited for
    time_for_enrichment: Callable[[], bool] | None = None
    recalled: bool = False  # the question itself was answered from a learned fact
    searched: tuple[GraphRanking, list[Passage]] | None = None  # the first read's search and GraphRank, reused by round 0
    # Every (question, context) read so far, by its lines: greedy decoding of the same prompt gives the same answer.
    done: dict[tuple[str, ...], Sufficiency] = field(default_factory=dict)
    best: SearchRound | None = None  # the best read of the whole question so far: the answer when the budget is spent

    @property
    def question(self) -> str:
        return self.analysis.question

    def keep_if_best(self, read: SearchRound) -> None:
        if self.best is None or read.better_than(self.best):
            self.best = read

    def has_time_to_enrich(self) -> bool:
        """A queued round costs the answer nothing; one waited for must fit the request's time limit."""
        return self.enrich_later or self.time_for_enrichment is None or self.time_for_enrichment()


@dataclass
class SearchRound:
    """The best hypothetical answer of one round and the subgraph it was read from."""

    read: Sufficiency | None = None
    subgraph: Subgraph = field(default_factory=Subgraph)
    ranked: tuple[Passage, ...] = ()  # the round's PageRank passages: what EnrichGraph reads first
    grounded: bool = True  # a hop's read: what it read states its answer
    searched: bool = False  # the search's first read, which states its answer (no bridge check reads past it)

    def better_than(self, other: SearchRound) -> bool:
        """A grounded read beats an ungrounded one; then the lower perplexity."""
        return other.read is None or (self.grounded, -self.perplexity) > (other.grounded, -other.perplexity)

    @property
    def answer(self) -> str:
        return self.read.answer if self.read else ""

    @property
    def perplexity(self) -> float:
        return self.read.perplexity if self.read else float("inf")

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        return self.read.evidence if self.read else ()


def context_built(sub: Subgraph, selection: dict[str, Any] | None, surfaced: Sequence[Passage]) -> ContextBuilt:
    return ContextBuilt(
        entry_points=len(sub.entry_ids),
        candidates=(sub.candidates[0], sub.candidates[1]),
        subgraph_nodes=len(sub.nodes),
        facts=len(sub.evidence),
        passages=len(sub.passages),
        fact_lines=len(sub.facts),
        chunk_ids=tuple(p.id for p in sub.passages),
        fact_ids=tuple(f.id for f in sub.facts),
        selection=selection,
        surfaced=tuple(p.id for p in surfaced) if surfaced else None,
    )
