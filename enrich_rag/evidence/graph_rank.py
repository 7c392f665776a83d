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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from enrich_rag.config import EmbeddingsConfig, RetrievalConfig
from enrich_rag.index.graph_index import search_graph
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.neighbourhood import Link, Neighbourhood
from enrich_rag.storage.passages import Passage, PassageStore, normalised

PAGERANK_ITERATIONS = 50
PAGERANK_TOLERANCE = 1e-8
RECORD_TOP = 10
TOP_ENTITIES = 10  # entities handed on as PCST prizes for the evidence subgraph


@dataclass
class Walk:
    passages: list[tuple[str, float]]  # chunk id, PageRank mass; best first
    entities: dict[str, float]  # the entities with the most mass, relative to the first
    reset: dict[str, float]  # node or chunk id -> reset weight
    size: tuple[int, int]  # (nodes, edges) of the walked neighbourhood
    mass: dict[str, float] = field(default_factory=dict)  # node or chunk id -> PageRank mass


@dataclass
class GraphRanking:
    """One round's walk: PageRank's passages, and the neighbourhood it walked, which the evidence tree
    (evidence/enrich_context.py) is cut from without reading the graph again."""

    passages: list[Passage]  # best first, `score` = PageRank mass relative to the first
    reset: dict[str, float] = field(default_factory=dict)  # node or chunk id -> reset weight
    size: tuple[int, int] = (0, 0)  # (nodes, edges) of the walked neighbourhood
    entities: dict[str, float] = field(default_factory=dict)  # top entities by PageRank, relative to the first
    neighbourhood: Neighbourhood = field(default_factory=Neighbourhood)
    mass: dict[str, float] = field(default_factory=dict)  # node or chunk id -> PageRank mass
    dense: dict[str, float] = field(default_factory=dict)  # chunk id -> dense relevance to the question, in [0, 1]

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


def entry_weights(hits: list[dict[str, Any]], hood: Neighbourhood, query_entities: Iterable[str] = ()) -> dict[str, float]:
    """Entities the question points at, with weights: graph-index entities and both ends of the facts it
    hit (`hood.hits`, as stored), and the question's own names."""
    weights: dict[str, float] = {}
    score = {h["id"]: max(h["score"], 0.0) for h in hits}
    for hit in hits:
        if hit.get("kind") == "node":
            weights[hit["id"]] = weights.get(hit["id"], 0.0) + score[hit["id"]]
    for edge in hood.hits:
        for end in (edge.src, edge.dst):
            weights[end] = weights.get(end, 0.0) + score[edge.id]
    for name in query_entities:
        weights[node_id(name)] = weights.get(node_id(name), 0.0) + 1.0
    return weights


def walk(hood: Neighbourhood, entities: dict[str, float], dense: dict[str, float], config: RetrievalConfig, limit: int) -> Walk:
    """PageRank from weighted entry entities and dense passage scores (chunk id -> score in [0, 1]) over
    their bounded neighbourhood: the top `limit` passages and the top entities."""
    degree, links = hood.degree, hood.links
    ends = [end for e in hood.facts for end in (e.src, e.dst)]
    # Reset mass: an entity's weight spread over its passages (specific entities count more), and a
    # small share for the dense passages.
    reset = {entity: weight / degree[entity] for entity, weight in entities.items() if entity in degree and weight > 0}
    for chunk, score in dense.items():
        if score > 0:
            reset[chunk] = reset.get(chunk, 0.0) + config.passage_weight * score

    chunks = list(dict.fromkeys([*dense, *(r.chunk_id for r in links)]))
    index = {key: i for i, key in enumerate(chunks)}
    for key in [*(r.node for r in links), *ends, *degree]:
        index.setdefault(key, len(index))
    weighted = [(index[r.node], index[r.chunk_id], _link_weight(r, config.title_link_weight)) for r in links]
    weighted += [(index[e.src], index[e.dst], 1.0) for e in hood.facts]
    pointers = [(index[a], index[b], w * config.page_links) for a, b, w in _page_links(links)] if config.page_links else []
    size = (len(index), len(weighted))
    if not reset:
        return Walk([(c, dense.get(c, 0.0)) for c in chunks[:limit]], {}, reset, size=size, mass={c: dense.get(c, 0.0) for c in chunks})
    vector = np.zeros(len(index))
    for key, weight in reset.items():
        vector[index[key]] = weight
    scores = personalized_pagerank(weighted, vector, config.damping, directed=pointers)
    mass = {key: float(scores[i]) for key, i in index.items()}
    ranked = sorted(chunks, key=lambda c: -scores[index[c]])[:limit]
    nodes = sorted(list(index)[len(chunks) :], key=lambda key: -scores[index[key]])[:TOP_ENTITIES]
    top = scores[index[nodes[0]]] if nodes and scores[index[nodes[0]]] > 0 else 1.0
    return Walk(
        [(c, float(scores[index[c]])) for c in ranked], {n: float(scores[index[n]] / top) for n in nodes}, reset, size=size, mass=mass
    )


def rank_passages(
    question: str,
    corpus_hits: Sequence[Passage],
    *,
    store: GraphStore,
    graph_index: Any,
    passages: PassageStore,
    config: RetrievalConfig,
    embeddings: EmbeddingsConfig,
    query_entities: Iterable[str] = (),
    limit: int = 10,
) -> GraphRanking:
    """`corpus_hits`: the round's one corpus search (its top `retrieval.graph_passages` seed the walk)."""
    hits = search_graph(graph_index, question, config.graph_entry_points, config=embeddings) if config.graph_entry_points else []
    top_hits = normalised(list(corpus_hits)[: config.graph_passages])
    dense = {p.id: p.score for p in top_hits}
    named = [h["id"] for h in hits if h.get("kind") == "node"] + [node_id(name) for name in query_entities]
    edge_ids = [h["id"] for h in hits if h.get("kind") == "edge"]
    hood = store.neighbourhood(named, edge_ids, list(dense), cap=config.max_links)
    walked = walk(hood, entry_weights(hits, hood, query_entities), dense, config=config, limit=limit)
    ranked = walked.passages
    found = {p.id: p for p in passages.by_ids([c for c, _ in ranked])}
    best = ranked[0][1] if ranked and ranked[0][1] > 0 else 1.0
    return GraphRanking(
        [found[c].scored(mass / best) for c, mass in ranked if c in found],
        walked.reset,
        walked.size,
        entities=walked.entities,
        neighbourhood=hood,
        mass=walked.mass,
        dense=dense,
    )


def _page_links(links: list[Link]) -> list[tuple[str, str, float]]:
    """(passage, page, weight): a passage's mention of an entity, pointed at that entity's own page."""
    pages: dict[str, list[str]] = {}
    for r in links:
        if r.is_title:
            pages.setdefault(r.node, []).append(r.chunk_id)
    return [
        (r.chunk_id, page, _link_weight(r, 1.0)) for r in links if not r.is_title for page in pages.get(r.node, ()) if page != r.chunk_id
    ]


def _link_weight(link: Link, title_weight: float) -> float:
    return (1.0 + math.log(max(link.count, 1))) * (title_weight if link.is_title else 1.0)
