"""How the reader's context is chosen (`evidence.selection`): one small interface, a class per strategy,
picked once from config.

A strategy turns one search round (the question's corpus hits, and GraphRank's walk when it reads the
graph) into a `ContextRound`: the context at each iteration, one passage wider each time, what was read
before kept first in its order so the prompt extends.

- `TreeChoice` (pcst): the Prize-Collecting Steiner Tree is the context; entity-first's choice and its
  scores, computed once a round, are the tree's passage prizes.
- `EntityFirstChoice`: entity-first's passages, then PageRank's.
- `PageRankChoice`: PageRank's top passages.

A round retried after an enrichment first reads what the enrichment surfaced (`SurfacedRound`). A hop of
a plan reads its strategy's passages one at a time (`AloneChoice`): the 1.5B reader answers a single-hop
question over one passage well, and a second passage beside it often hands it the wrong entity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.evidence.enrich_context import Subgraph, drawn_passages, enrich_context, entity_scores
from enrich_rag.evidence.graph_rank import GraphRanking
from enrich_rag.evidence.query_analysis import QueryAnalysis
from enrich_rag.evidence.select import Selection
from enrich_rag.storage.passages import Passage

# Entity-first selection over the round's corpus hits: (analysis, hits, graph passages, search the graph index
# too?, the evidence settings it selects with)
Select = Callable[[QueryAnalysis, Sequence[Passage], Sequence[Passage], bool, EvidenceConfig], Selection]


class ContextRound(Protocol):
    record: dict[str, Any] | None  # the selection behind it, shown with the round's first context

    def at(self, iteration: int, previous: Subgraph) -> Subgraph: ...


class ContextChoice(Protocol):
    evidence: EvidenceConfig  # its `k`: the passages of the first read

    @property
    def reads_graph(self) -> bool: ...  # whether its rounds need GraphRank's walk

    @property
    def alone(self) -> bool: ...  # each read one new passage on its own: the first read that states its answer ends a hop

    def round(self, analysis: QueryAnalysis, ranking: GraphRanking | None, hits: Sequence[Passage]) -> ContextRound: ...


def _unique(passages: Sequence[Passage]) -> list[Passage]:
    return list({p.id: p for p in passages}.values())


@dataclass
class ListRound:
    """Passages in a fixed order of preference, `k + iteration` of them."""

    order: list[Passage]
    k: int
    ranking: GraphRanking | None
    record: dict[str, Any] | None = None

    def at(self, iteration: int, previous: Subgraph) -> Subgraph:
        return drawn_passages(_unique([*previous.passages, *self.order])[: self.k + iteration], self.ranking)


@dataclass
class SurfacedRound:
    """What the round before read, then one passage more each iteration of those the enrichment surfaced."""

    read_before: list[Passage]
    surfaced: list[Passage]
    ranking: GraphRanking | None
    record: dict[str, Any] | None = None

    def at(self, iteration: int, previous: Subgraph) -> Subgraph:
        return drawn_passages([*self.read_before, *self.surfaced[: iteration + 1]], self.ranking)


@dataclass
class TreeRound:
    question: str
    entities: Sequence[str]
    ranking: GraphRanking
    agent: AgentConfig
    evidence: EvidenceConfig
    selected: list[Passage]
    scores: dict[str, float] = field(default_factory=dict)
    record: dict[str, Any] | None = None

    def at(self, iteration: int, previous: Subgraph) -> Subgraph:
        return enrich_context(
            self.question,
            self.entities,
            self.ranking,
            agent=self.agent,
            evidence=self.evidence,
            budget=self.evidence.k + iteration,
            previous=previous.evidence,
            selected=self.selected,
            scores=self.scores,
        )


@dataclass
class TreeChoice:
    agent: AgentConfig
    evidence: EvidenceConfig
    select: Select
    reads_graph: bool = True
    alone = False

    def round(self, analysis: QueryAnalysis, ranking: GraphRanking | None, hits: Sequence[Passage]) -> ContextRound:
        assert ranking is not None  # the tree is cut from GraphRank's neighbourhood
        # The tree reads the graph itself: entity-first's micro-queries search the corpus only.
        selection = self.select(analysis, hits, ranking.passages, False, self.evidence)
        pool = _unique([*selection.passages, *ranking.passages])
        scores = entity_scores(pool, analysis.entities, ranking.dense, evidence=self.evidence)
        return TreeRound(
            analysis.question,
            analysis.entities,
            ranking,
            agent=self.agent,
            evidence=self.evidence,
            selected=selection.passages,
            scores=scores,
            record=selection.record,
        )


@dataclass
class EntityFirstChoice:
    evidence: EvidenceConfig
    select: Select
    alone = False

    @property
    def reads_graph(self) -> bool:
        return self.evidence.graph

    def round(self, analysis: QueryAnalysis, ranking: GraphRanking | None, hits: Sequence[Passage]) -> ContextRound:
        graph_passages = ranking.passages if ranking else []
        selection = self.select(analysis, hits, graph_passages, self.evidence.graph, self.evidence)
        return ListRound([*selection.passages, *graph_passages], self.evidence.k, ranking, record=selection.record)


@dataclass
class PageRankChoice:
    evidence: EvidenceConfig
    reads_graph: bool = True
    alone = False

    def round(self, analysis: QueryAnalysis, ranking: GraphRanking | None, hits: Sequence[Passage]) -> ContextRound:
        return ListRound(list(ranking.passages) if ranking else [], self.evidence.k, ranking)


@dataclass
class AloneRound:
    """Each read is what the wrapped round adds at that iteration, read on its own; the first read keeps
    the wrapped context's fact lines (a fact the graph holds may answer a hop by itself)."""

    inner: ContextRound
    ranking: GraphRanking | None
    record: dict[str, Any] | None = None
    grown: Subgraph = field(default_factory=Subgraph)

    def at(self, iteration: int, previous: Subgraph) -> Subgraph:
        wider = self.inner.at(iteration, self.grown)
        seen = {p.id for p in self.grown.passages}
        new = [p for p in wider.passages if p.id not in seen]
        if iteration and not new:
            return previous  # the wrapped round has nothing more to give
        self.grown = wider
        alone = drawn_passages(new or wider.passages, self.ranking)
        if not iteration:
            alone.evidence = [*alone.evidence, *wider.facts]
        return alone


@dataclass
class AloneChoice:
    inner: ContextChoice
    evidence: EvidenceConfig
    alone = True

    @property
    def reads_graph(self) -> bool:
        return self.inner.reads_graph

    def round(self, analysis: QueryAnalysis, ranking: GraphRanking | None, hits: Sequence[Passage]) -> ContextRound:
        inner = self.inner.round(analysis, ranking, hits)
        return AloneRound(inner, ranking, inner.record)


def hop_choice(agent: AgentConfig, evidence: EvidenceConfig, select: Select) -> ContextChoice:
    """How a hop of a plan chooses what it reads: `hop_k` passages first, in `hop_selection`'s order, then
    alone or growing."""
    choice = context_choice(agent, replace(evidence, k=evidence.hop_k, selection=evidence.hop_selection), select)
    return AloneChoice(choice, choice.evidence) if evidence.hop_reading == "alone" else choice


def context_choice(agent: AgentConfig, evidence: EvidenceConfig, select: Select) -> ContextChoice:
    """The strategy `evidence.selection` names (the config already checked the name)."""
    if evidence.selection == "pcst":
        return TreeChoice(agent, evidence, select)
    if evidence.selection == "entity_first":
        return EntityFirstChoice(evidence, select)
    return PageRankChoice(evidence)
