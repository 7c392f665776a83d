"""Tool 1, EnrichContext: the Prize-Collecting Steiner Tree that *is* the reader's context (G-Retriever).

The tree is cut from the same bounded neighbourhood GraphRank read and walked (one DuckDB read per
round, `storage/neighbourhood.py`): passages, entities, their links and the named facts among them,
with every entity's name; nothing here reads the store.

- A passage's prize is SEAL-RAG's: the entity-first score (coverage of the question's entities in its
  title and lead, title match, salience, its PageRank mass or dense relevance as retrieval score), plus
  its PageRank mass. The passages entity-first's gap-filling rounds chose (micro-queries and bridges find
  second hops no score sees) join the question directly and are prized so that the first budget's tree
  holds them; what a wider budget adds, the tree chooses.
- An entity's prize is 1 when the question names it, else a share of its PageRank mass; a fact earns
  the share of the question's content words in its sentence.
- Edges cost by kind: a title link (an entity and its own page) is nearly free, a mention or a named
  relation costs `agent.edge_cost`, co-occurrence more. A question node joins the question's entities
  (and the dense hits) so a comparison's two unconnected pages can share one tree.

The tree's passages, in tree order from the question's entities outwards, are the context; the facts on
the tree that no context passage states become short fact lines. A wider budget keeps what the reader
already read, in its order, and appends: the prompt extends and llama.cpp's cache reads only the rest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.evidence.graph_rank import GraphRanking
from enrich_rag.evidence.lines import Evidence
from enrich_rag.evidence.pcst import solve_pcst
from enrich_rag.evidence.rerank import ranker_view
from enrich_rag.evidence.select import entity_ranker, lead
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.neighbourhood import Link, Neighbourhood
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import STRUCTURAL_RELATIONS, Edge
from enrich_rag.text import content_words, overlap

# Edge cost per kind, times `agent.edge_cost`. Low on purpose: the tree the prizes alone would pay for is
# wider than the reader's budget, and the budget (`solve_pcst`'s cost scale) decides what stays.
COSTS = {"title": 0.1, "mention": 0.4, "relation": 0.4, "structural": 0.6, "question": 0.4}
QUERY_ENTITY_COST = 0.02  # the question reaches an entity it names almost for free
# Passage prizes beside the entity-first score: the score alone rarely prizes a second hop over a
# dense distractor; entity-first's choice (found by its micro-queries) and PageRank do
# (`python -m benchmarks eval_selection` measures the context the tree gives at each budget). Entity-first's
# choice is prized above any path the budget search can price (2^MAX_SCALE_LOG2 x a question edge), so
# the first budget's tree holds it and a wider one adds what the tree connects: lower, the tree traded
# a second hop for a passage hanging cheaply off a question entity (HotpotQA dev 100: both gold
# passages in the first context 0.54, against entity-first's own 0.63; now 0.63).
SELECTION_PRIZE = 1000.0  # the first passage entity-first chose; the others by rank, down to SELECTION_PRIZE / k
PAGERANK_PRIZE = 10.0  # times the passage's PageRank mass relative to the top passage
# Prize share of a page's chunks after its best-prized one (2Wiki dev 100: the tree of 4 passages
# holds every gold passage for 0.58 of questions at full prize, 0.63 at this share).
SAME_PAGE_SHARE = 0.25
OTHER_ENTITY_PRIZE = 0.1  # times the entity's PageRank mass relative to the top entity
ROOT = "question"


@dataclass
class Subgraph:
    """The tree as read (`evidence`, in reading order) and as drawn (`nodes`, `edges`): the drawn passage
    nodes are exactly the passages read."""

    nodes: list[dict[str, Any]] = field(default_factory=list)  # id, name, kind (entity | passage), prize
    edges: list[dict[str, Any]] = field(default_factory=list)  # src, dst, kind, relation, evidence, chunk_id
    entry_ids: list[str] = field(default_factory=list)  # entities the question reaches directly
    evidence: list[Evidence] = field(default_factory=list)  # passages and fact lines, in reading order
    candidates: tuple[int, int] = (0, 0)  # nodes, edges before PCST

    @property
    def passages(self) -> list[Passage]:
        return [e for e in self.evidence if isinstance(e, Passage)]

    @property
    def facts(self) -> list[Edge]:
        return [e for e in self.evidence if isinstance(e, Edge)]

    def to_dict(self) -> dict[str, Any]:
        """What the web page draws, and which of it the reader read."""
        return {
            "nodes": self.nodes,
            "edges": self.edges,
            "entry_ids": self.entry_ids,
            "context": [p.id for p in self.passages],
            "fact_lines": [f.id for f in self.facts],
        }


def passage_node(chunk_id: str) -> str:
    return f"p:{chunk_id}"


@dataclass
class TreeGraph:
    """The neighbourhood as PCST reads it: node keys by index, prizes, edges with their kind and cost."""

    keys: list[str] = field(default_factory=list)  # ROOT, entity ids, passage node ids
    prizes: list[float] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # kind, relation, evidence, chunk_id, ...
    edge_prizes: list[float] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)

    def node(self, key: str, prize: float) -> int:
        if key not in self._index:
            self._index[key] = len(self.keys)
            self.keys.append(key)
            self.prizes.append(0.0)
        i = self._index[key]
        self.prizes[i] = max(self.prizes[i], prize)
        return i

    def edge(self, a: str, b: str, cost: float, prize: float = 0.0, **row: Any) -> None:
        self.edges.append((self._index[a], self._index[b]))
        self.costs.append(cost)
        self.edge_prizes.append(prize)
        self.rows.append(row | {"src": a, "dst": b})

    def __post_init__(self) -> None:
        self._index: dict[str, int] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._index


def entity_scores(
    passages: Sequence[Passage], entities: Sequence[str], dense: dict[str, float], evidence: EvidenceConfig
) -> dict[str, float]:
    """Entity-first's hybrid score on each passage's title and lead, its retrieval score the higher of its
    PageRank mass and its dense relevance: computed once a round, the tree's passage prizes."""
    ranker = entity_ranker(evidence)
    return {p.id: ranker.score(lead(ranker_view(p.scored(max(p.score, dense.get(p.id, 0.0))))), entities) for p in passages}


def passage_prizes(
    passages: Sequence[Passage],
    scores: dict[str, float],
    selected: Sequence[str] = (),
    pagerank: dict[str, float] | None = None,
) -> dict[str, float]:
    """The entity-first score (`scores`), the rank prize of entity-first's choice, and PageRank."""
    pagerank = pagerank or {}
    chosen = {pid: SELECTION_PRIZE * (len(selected) - i) / len(selected) for i, pid in enumerate(selected)}
    prizes = {p.id: scores[p.id] + chosen.get(p.id, 0.0) + PAGERANK_PRIZE * pagerank.get(p.id, 0.0) for p in passages}
    # A page's further chunks hang off its entity almost for free, so at full prize a wider budget fills
    # with one page's continuation instead of the other side of a comparison.
    seen: set[str] = set()
    for p in sorted(passages, key=lambda p: -prizes[p.id]):
        if p.doc_id in seen:
            prizes[p.id] *= SAME_PAGE_SHARE
        seen.add(p.doc_id)
    return prizes


def tree_graph(
    question: str,
    entities: Sequence[str],
    ranking: GraphRanking,
    passages: Sequence[Passage],
    agent: AgentConfig,
    evidence: EvidenceConfig,
    selected: Sequence[str] = (),
    scores: dict[str, float] | None = None,
) -> TreeGraph:
    """`scores`: entity-first's, by passage (`entity_scores`; computed here when not given)."""
    hood = ranking.neighbourhood
    words = content_words(question)
    g = TreeGraph()
    g.node(ROOT, 0.0)
    chunk_ids = {p.id for p in passages}
    pagerank = {p.id: p.score for p in ranking.passages}
    scores = scores if scores is not None else entity_scores(passages, entities, ranking.dense, evidence=evidence)
    for chunk, prize in passage_prizes(passages, scores, selected, pagerank=pagerank).items():
        g.node(passage_node(chunk), prize)
    named = {node_id(e) for e in entities}
    mass = ranking.mass
    top = max((mass.get(r.node, 0.0) for r in hood.links), default=0.0) or 1.0
    for link in hood.links:
        if link.chunk_id not in chunk_ids:
            continue
        g.node(link.node, 1.0 if link.node in named else OTHER_ENTITY_PRIZE * mass.get(link.node, 0.0) / top)
        _link_edge(g, link, agent.edge_cost)
    for fact in {f.id: f for f in hood.facts}.values():
        if fact.src not in g or fact.dst not in g:
            continue
        relevance = overlap(words, fact.evidence)
        kind = "structural" if fact.relation in STRUCTURAL_RELATIONS else "relation"
        g.edge(
            fact.src,
            fact.dst,
            agent.edge_cost * COSTS[kind] * (1.0 - min(relevance, 0.9)),
            prize=relevance * fact.confidence,
            kind=kind,
            fact=fact,
        )
    reset_top = max(ranking.reset.values(), default=0.0) or 1.0
    asked: set[str] = set()
    for key, weight in ranking.reset.items():
        target = passage_node(key) if key in chunk_ids else key
        if target in g:
            cost = QUERY_ENTITY_COST if key in named else _question_cost(agent, weight / reset_top)
            g.edge(ROOT, target, cost, kind="question", relation="asks about")
            asked.add(target)
    for name in named:  # a named entity PageRank could not seed (no passages yet) still joins the question
        if name in g and name not in asked:
            g.edge(ROOT, name, QUERY_ENTITY_COST, kind="question", relation="asks about")
    # Entity-first's choice was found for this question (a micro-query, a bridge): it joins the question
    # as the top dense hit does. Else a second hop whose page the shallow seed never linked is reached only
    # through another passage that names its entity, and that relay then takes the budget's place.
    for chunk in selected:
        if passage_node(chunk) in g and passage_node(chunk) not in asked:
            g.edge(ROOT, passage_node(chunk), _question_cost(agent, 1.0), kind="question", relation="asks about")
    return g


def _link_edge(g: TreeGraph, link: Link, cost_scale: float) -> None:
    kind = "title" if link.is_title else "mention"
    g.edge(
        link.node,
        passage_node(link.chunk_id),
        cost_scale * COSTS[kind],
        kind=kind,
        relation="is the page of" if link.is_title else "is named in",
        chunk_id=link.chunk_id,
    )


def _question_cost(agent: AgentConfig, share: float) -> float:
    """The question's edge to a seed it reached by search: cheaper the larger its share of the top weight."""
    return agent.edge_cost * COSTS["question"] * (1.5 - min(share, 1.0))


def tree_order(nodes: set[int], edges: list[tuple[int, int]], start: int, first: Callable[[int], Any] = lambda n: n) -> list[int]:
    """Pre-order from the question outwards, children in `first` order: an entity the question names,
    then its page and what hangs off it, before the next branch. Nodes the root does not reach follow."""
    adjacent: dict[int, list[int]] = {}
    for a, b in edges:
        adjacent.setdefault(a, []).append(b)
        adjacent.setdefault(b, []).append(a)
    order, seen, stack = [], {start}, [start]
    while stack:
        n = stack.pop()
        order.append(n)
        children = sorted((m for m in adjacent.get(n, ()) if m not in seen and m in nodes), key=first)
        seen.update(children)
        stack.extend(reversed(children))
    return order + sorted(nodes - set(order))


def enrich_context(
    question: str,
    entities: Sequence[str],
    ranking: GraphRanking,
    agent: AgentConfig,
    evidence: EvidenceConfig,
    budget: int,
    previous: Sequence[Evidence] = (),
    selected: Sequence[Passage] = (),
    scores: dict[str, float] | None = None,
) -> Subgraph:
    """The context for a budget of `budget` passages: what the reader read before (`previous`) in its
    order, then the tree's new passages and the fact lines they do not already state. `selected`:
    entity-first's choice, prized by rank; `scores`: entity-first's scores of the round's passages."""
    kept = [e for e in previous if isinstance(e, Passage)]
    candidates = list({p.id: p for p in [*kept, *selected, *ranking.passages]}.values())
    g = tree_graph(
        question, entities, ranking, passages=candidates, agent=agent, evidence=evidence, selected=[p.id for p in selected], scores=scores
    )
    passage_index = [i for i, key in enumerate(g.keys) if key.startswith("p:")]
    result = solve_pcst(
        len(g.keys),
        g.edges,
        g.prizes,
        edge_prizes=g.edge_prizes,
        edge_costs=g.costs,
        max_nodes=agent.max_nodes,
        max_edges=agent.max_edges,
        counted=passage_index,
        max_counted=budget,
        root=0,
    )
    chosen = [g.edges[i] for i in result.edges]
    named = {node_id(e) for e in entities}
    # The question's own entities first, then by prize: the context reads from what is asked outwards.
    order = tree_order(set(result.nodes), chosen, 0, first=lambda i: (g.keys[i] not in named, -g.prizes[i], i))
    by_id = {p.id: p for p in candidates}
    read = list(previous)
    read_ids = {e.id for e in read}
    for i in order:
        key = g.keys[i]
        if key.startswith("p:") and len([e for e in read if isinstance(e, Passage)]) < budget and key[2:] not in read_ids:
            read.append(by_id[key[2:]])
            read_ids.add(key[2:])
    stated = {e.id for e in read if isinstance(e, Passage)}
    for i in result.edges:
        row = g.rows[i]
        fact = row.get("fact")
        if (
            evidence.fact_lines
            and fact
            and row["kind"] == "relation"
            and fact.chunk_id not in stated
            and fact.id not in read_ids
            and len([e for e in read if isinstance(e, Edge)]) < evidence.max_fact_lines
        ):
            read.append(dataclasses.replace(fact, score=g.edge_prizes[i]))
            read_ids.add(fact.id)
    return drawn(g, result.nodes, result.edges, read=read, names=ranking.neighbourhood.names)


def drawn(g: TreeGraph, nodes: Sequence[int], edges: Sequence[int], read: list[Evidence], names: dict[str, str]) -> Subgraph:
    """The tree as the page draws it: its entities and edges, and as passage nodes exactly the passages read
    (a passage kept from a narrower budget is drawn with its links to the tree's entities)."""
    read_nodes = {passage_node(e.id) for e in read if isinstance(e, Passage)}
    keys = {g.keys[i] for i in nodes if g.keys[i] != ROOT and (not g.keys[i].startswith("p:") or g.keys[i] in read_nodes)}
    keys |= read_nodes
    rows = [g.rows[i] for i in edges]
    rows += [r for r in g.rows if r["dst"] in read_nodes and r["src"] in keys and r not in rows]
    entities = sorted(k for k in keys if not k.startswith("p:"))
    titles = {passage_node(e.id): e.title or e.id for e in read if isinstance(e, Passage)}
    index = {key: i for i, key in enumerate(g.keys)}
    out_nodes = [{"id": k, "name": names.get(k, k), "kind": "entity", "prize": round(g.prizes[index[k]], 4)} for k in entities]
    out_nodes += [
        {"id": k, "name": titles[k], "kind": "passage", "chunk_id": k[2:], "prize": round(g.prizes[index[k]], 4) if k in index else 0.0}
        for k in sorted(read_nodes)
    ]
    out_edges = [_edge_record(r) for r in rows if r["src"] in keys and r["dst"] in keys]
    entry = sorted({r["dst"] for r in g.rows if r["kind"] == "question" and r["dst"] in keys})
    return Subgraph(out_nodes, out_edges, entry, evidence=list(read), candidates=(len(g.keys), len(g.edges)))


def _edge_record(row: dict[str, Any]) -> dict[str, Any]:
    fact = row.get("fact")
    if fact:
        return {
            "id": fact.id,
            "src": row["src"],
            "dst": row["dst"],
            "kind": row["kind"],
            "relation": fact.relation,
            "evidence": fact.evidence,
            "chunk_id": fact.chunk_id,
            "extractor": fact.extractor or "",
        }
    return {
        "id": f"{row['src']}|{row['dst']}",
        "src": row["src"],
        "dst": row["dst"],
        "kind": row["kind"],
        "relation": row["relation"],
        "evidence": "",
        "chunk_id": row.get("chunk_id", ""),
        "extractor": "",
    }


def drawn_passages(passages: list[Passage], ranking: GraphRanking | None) -> Subgraph:
    """For the selections that are not a tree (entity-first, PageRank's top): the passages read, each
    with its own page's entity, and the entities that link two of them (a hop the reader can follow)."""
    hood = ranking.neighbourhood if ranking else Neighbourhood()
    chunks = {p.id for p in passages}
    mine = [r for r in hood.links if r.chunk_id in chunks]
    shared = {r.node for r in mine if sum(1 for s in mine if s.node == r.node) > 1}
    g = TreeGraph()
    for p in passages:
        g.node(passage_node(p.id), 0.0)
    for r in mine:
        if r.is_title or r.node in shared:
            g.node(r.node, 0.0)
            _link_edge(g, r, 1.0)
    return drawn(g, range(len(g.keys)), range(len(g.edges)), read=list(passages), names=hood.names)
