"""Passages ranked through the graph: personalized PageRank over entities and passages (HippoRAG 2 style).

Entities and passages are nodes of one graph: entity-passage links (a passage mentions, or is about,
an entity) and entity-entity relation facts. The reset vector starts where the question points:
entities of the facts and nodes the graph index matches (each divided by how many passages it links
to, so a specific entity counts more than "United States"), the question's own named entities, and,
with a small weight, the passages dense search ranks high. PageRank then carries that mass across
links, so the passage of a second-hop entity that the question never names, but whose facts connect
to the first hop, rises even when dense search ranks it low.

The walk runs on a bounded neighbourhood read from DuckDB (entry entities, their passages, those
passages' entities and the facts among them), never the whole graph, so its cost follows the
question, not the graph size.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from enrich_rag.config import EmbeddingsConfig, RetrievalConfig
from enrich_rag.index.graph_index import search_graph
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.passages import Passage, PassageStore
from enrich_rag.storage.schema import COOCCURS

PAGERANK_ITERATIONS = 50
PAGERANK_TOLERANCE = 1e-8
RECORD_TOP = 10
TOP_ENTITIES = 10  # entities handed on as PCST prizes for the evidence subgraph


@dataclass
class Neighbourhood:
    """The question's bounded graph, read from DuckDB once per round: PageRank walks it and the evidence
    tree (agent/enrich_context.py) is cut from it, so both read the same graph."""

    links: list[dict[str, Any]] = field(default_factory=list)  # entity-passage links (node, chunk_id, count, is_title)
    facts: list[dict[str, Any]] = field(default_factory=list)  # named-relation facts among its entities
    names: dict[str, str] = field(default_factory=dict)  # entity id -> name
    mass: dict[str, float] = field(default_factory=dict)  # node or chunk id -> PageRank mass
    reset: dict[str, float] = field(default_factory=dict)  # node or chunk id -> reset weight
    dense: dict[str, float] = field(default_factory=dict)  # chunk id -> dense relevance to the question, in [0, 1]


@dataclass
class Walk:
    passages: list[tuple[str, float]]  # chunk id, PageRank mass; best first
    entities: dict[str, float]  # the entities with the most mass, relative to the first
    reset: dict[str, float]  # node or chunk id -> reset weight
    size: tuple[int, int]  # (nodes, edges) of the walked neighbourhood
    neighbourhood: Neighbourhood = field(default_factory=Neighbourhood)


@dataclass
class GraphRanking:
    passages: list[Passage]  # best first, `score` = PageRank mass relative to the first
    reset: dict[str, float] = field(default_factory=dict)  # node or chunk id -> reset weight
    size: tuple[int, int] = (0, 0)  # (nodes, edges) of the walked neighbourhood
    entities: dict[str, float] = field(default_factory=dict)  # top entities by PageRank, relative to the first
    neighbourhood: Neighbourhood = field(default_factory=Neighbourhood)

    def record(self) -> dict[str, Any]:
        seeds = sorted(self.reset.items(), key=lambda kv: -kv[1])[:RECORD_TOP]
        return {
            "pagerank_top": [{"chunk_id": p.id, "score": round(p.score, 5)} for p in self.passages[:RECORD_TOP]],
            "pagerank_seeds": [k for k, _ in seeds],
            "pagerank_entities": [k for k in self.entities][:RECORD_TOP],
            "pagerank_graph": list(self.size),
        }


def personalized_pagerank(
    edges: Iterable[tuple[int, int, float]], reset: np.ndarray, damping: float, directed: Iterable[tuple[int, int, float]] = ()
) -> np.ndarray:
    """Power iteration of p = (1 - d) r + d W p over a weighted graph: `edges` both ways, `directed`
    one way (a passage pointing at a page it names).

    A node with no edges hands its mass back to the reset distribution, so no mass leaks.
    """
    n = len(reset)
    rows, cols, weights = zip(*edges) if edges else ((), (), ())
    adjacency = sparse.coo_matrix((weights, (rows, cols)), shape=(n, n)).tocsr()
    adjacency = adjacency + adjacency.T
    directed = list(directed)
    if directed:
        rows, cols, weights = zip(*directed)
        adjacency = adjacency + sparse.coo_matrix((weights, (cols, rows)), shape=(n, n)).tocsr()
    degree = np.asarray(adjacency.sum(axis=0)).ravel()
    dangling = degree == 0
    transition = adjacency @ sparse.diags(np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, degree)))
    r = reset / reset.sum()
    p = r.copy()
    for _ in range(PAGERANK_ITERATIONS):
        walked = transition @ p
        following = damping * (walked + p[dangling].sum() * r) + (1 - damping) * r
        if np.abs(following - p).sum() < PAGERANK_TOLERANCE:
            return following
        p = following
    return p


def entry_points(
    question: str,
    *,
    store: GraphStore,
    graph_index: Any,
    config: RetrievalConfig,
    embeddings: EmbeddingsConfig,
    query_entities: Iterable[str] = (),
) -> dict[str, float]:
    """Entities the question points at, with weights: graph-index facts (both ends) and entities, and
    the question's own names."""
    hits = search_graph(graph_index, question, config.graph_entry_points, embeddings) if config.graph_entry_points else []
    weights: dict[str, float] = {}
    score = {h["id"]: max(h["score"], 0.0) for h in hits}
    for hit in hits:
        if hit.get("kind") == "node":
            weights[hit["id"]] = weights.get(hit["id"], 0.0) + score[hit["id"]]
    for edge in store.edges_by_ids([h["id"] for h in hits if h.get("kind") == "edge"]):
        for end in (edge["src"], edge["dst"]):
            weights[end] = weights.get(end, 0.0) + score[edge["id"]]
    for name in query_entities:
        weights[node_id(name)] = weights.get(node_id(name), 0.0) + 1.0
    return weights


def walk(store: GraphStore, entities: dict[str, float], dense: dict[str, float], config: RetrievalConfig, limit: int) -> Walk:
    """PageRank from weighted entry entities and dense passage scores (chunk id -> score in [0, 1]) over
    their bounded neighbourhood: the top `limit` passages and the top entities."""
    # The neighbourhood, two link hops out: the entry entities and the ends of their facts, with their
    # passages; the entities those passages and the dense ones mention, with their passages.
    first = store.links(node_ids=list(entities))
    degree = {r["node"]: r["degree"] for r in first}
    facts = [e for e in store.neighbors(list(degree), limit=config.max_links).edges if e["relation"] != COOCCURS]
    ends = [end for e in facts for end in (e["src"], e["dst"])]
    near = _capped(store.links(node_ids=list(degree) + ends, chunk_ids=list(dense)), config.max_links)
    far = _capped(store.links(node_ids=[r["node"] for r in near]), config.max_links)
    links = list({(r["node"], r["chunk_id"]): r for r in near + far}.values())
    hood = Neighbourhood(links, facts, dense=dict(dense))

    # Reset mass: an entity's weight spread over its passages (specific entities count more), and a
    # small share for the dense passages.
    reset = {entity: weight / degree[entity] for entity, weight in entities.items() if entity in degree and weight > 0}
    for chunk, score in dense.items():
        if score > 0:
            reset[chunk] = reset.get(chunk, 0.0) + config.passage_weight * score

    chunks = list(dict.fromkeys([*dense, *(r["chunk_id"] for r in links)]))
    index = {key: i for i, key in enumerate(chunks)}
    for key in [*(r["node"] for r in links), *ends, *degree]:
        index.setdefault(key, len(index))
    weighted = [(index[r["node"]], index[r["chunk_id"]], _link_weight(r, config.title_weight)) for r in links]
    weighted += [(index[e["src"]], index[e["dst"]], 1.0) for e in facts]
    pointers = [(index[a], index[b], w * config.page_links) for a, b, w in _page_links(links)] if config.page_links else []
    size = (len(index), len(weighted))
    hood.reset = reset
    if not reset:
        hood.mass = {c: dense.get(c, 0.0) for c in chunks}
        return Walk([(c, dense.get(c, 0.0)) for c in chunks[:limit]], {}, reset, size, hood)
    vector = np.zeros(len(index))
    for key, weight in reset.items():
        vector[index[key]] = weight
    scores = personalized_pagerank(weighted, vector, config.damping, pointers)
    hood.mass = {key: float(scores[i]) for key, i in index.items()}
    ranked = sorted(chunks, key=lambda c: -scores[index[c]])[:limit]
    nodes = sorted(list(index)[len(chunks) :], key=lambda key: -scores[index[key]])[:TOP_ENTITIES]
    top = scores[index[nodes[0]]] if nodes and scores[index[nodes[0]]] > 0 else 1.0
    return Walk([(c, float(scores[index[c]])) for c in ranked], {n: float(scores[index[n]] / top) for n in nodes}, reset, size, hood)


def rank_passages(
    question: str,
    *,
    store: GraphStore,
    graph_index: Any,
    corpus: Callable[[str, int], list[Passage]],
    passages: PassageStore,
    config: RetrievalConfig,
    embeddings: EmbeddingsConfig,
    query_entities: Iterable[str] = (),
    limit: int = 10,
) -> GraphRanking:
    entities = entry_points(
        question, store=store, graph_index=graph_index, config=config, embeddings=embeddings, query_entities=query_entities
    )
    hits = corpus(question, config.graph_passages)
    top = max((p.score for p in hits), default=0.0) or 1.0
    dense = {p.id: p.score / top for p in hits}
    walked = walk(store, entities, dense, config, limit)
    ranked = walked.passages
    found = {p.id: p for p in passages.by_ids([c for c, _ in ranked])}
    best = ranked[0][1] if ranked and ranked[0][1] > 0 else 1.0
    return GraphRanking(
        [found[c].scored(mass / best) for c, mass in ranked if c in found], walked.reset, walked.size, walked.entities, walked.neighbourhood
    )


def _page_links(links: list[dict[str, Any]]) -> list[tuple[str, str, float]]:
    """(passage, page, weight): a passage's mention of an entity, pointed at that entity's own page."""
    pages: dict[str, list[str]] = {}
    for r in links:
        if r["is_title"]:
            pages.setdefault(r["node"], []).append(r["chunk_id"])
    return [
        (r["chunk_id"], page, _link_weight(r, 1.0))
        for r in links
        if not r["is_title"]
        for page in pages.get(r["node"], ())
        if page != r["chunk_id"]
    ]


def _link_weight(link: dict[str, Any], title_weight: float) -> float:
    return (1.0 + math.log(max(link["count"], 1))) * (title_weight if link["is_title"] else 1.0)


def _capped(links: list[dict[str, Any]], cap: int) -> list[dict[str, Any]]:
    """Keep the neighbourhood bounded: title links and specific entities first (low degree)."""
    return sorted(links, key=lambda r: (not r["is_title"], r["degree"], r["node"], r["chunk_id"]))[:cap]
