"""Tool 1, EnrichContext: txtai entry points -> DuckDB 1-hop neighbourhood -> PCST subgraph.

The connected evidence the trace and the web page show. Entry nodes are the graph index's hits and,
when graph retrieval ran, the entities PageRank gave the most mass (their relative mass is their
prize), so the subgraph shows the facts around what ranked the passages. Prizes: entry nodes get their search score; every candidate node and edge also gets a lexical
relevance (share of the query's content words in its name / evidence sentence), which is cheap and
lets a fact two steps from the entry points compete. Edge costs fall with relation relevance, and
structural edges (co-occurrence, mentions) cost a little more than named relations.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.agent.pcst import solve_pcst
from enrich_rag.config import AgentConfig, EmbeddingsConfig
from enrich_rag.index.graph_index import search_graph
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.schema import STRUCTURAL_RELATIONS, Edge
from enrich_rag.text import content_words, overlap

STRUCTURAL_COST_FACTOR = 1.5


@dataclass
class Subgraph:
    nodes: list[dict[str, Any]] = field(default_factory=list)  # id, name, prize
    facts: list[Edge] = field(default_factory=list)  # best first, scored
    entry_ids: list[str] = field(default_factory=list)
    candidates: tuple[int, int] = (0, 0)  # candidate nodes, edges before PCST

    def to_dict(self) -> dict[str, Any]:
        """The PCST subgraph as the web page draws it."""
        return {"nodes": self.nodes, "edges": [dataclasses.asdict(f) for f in self.facts], "entry_ids": self.entry_ids}


@dataclass
class PrizedGraph:
    """The candidate neighbourhood as PCST reads it: nodes by index, prizes and costs per edge."""

    node_ids: list[str]
    names: dict[str, str]
    node_prizes: list[float]
    edges: list[tuple[int, int]]
    edge_rows: list[dict[str, Any]]
    edge_prizes: list[float]
    edge_costs: list[float]


def entry_scores(hits: list[dict[str, Any]], store: GraphStore) -> tuple[dict[str, float], dict[str, float]]:
    """Graph-index hits -> score per entry node (a hit edge lends its score to both ends), and per hit edge."""
    nodes: dict[str, float] = {}
    for h in hits:
        if h.get("kind") == "node":
            nodes[h["id"]] = max(nodes.get(h["id"], 0.0), float(h["score"]))
    edge_hits = {h["id"]: float(h["score"]) for h in hits if h.get("kind") == "edge"}
    for edge in store.edges_by_ids(list(edge_hits)):
        for end in (edge["src"], edge["dst"]):
            nodes[end] = max(nodes.get(end, 0.0), edge_hits.get(edge["id"], 0.0))
    return nodes, edge_hits


def prize_graph(query: str, edges: list[dict[str, Any]], names: dict[str, str], entries: dict[str, float],
                edge_hits: dict[str, float], edge_cost: float) -> PrizedGraph:
    """Node prize = entry score + lexical relevance of its name; edge prize = relevance of its sentence
    (plus its own search score) x confidence; edge cost falls with relevance, structural edges cost more."""
    node_ids = sorted(names)
    index = {nid: i for i, nid in enumerate(node_ids)}
    words = content_words(query)
    graph = PrizedGraph(node_ids, names, [entries.get(nid, 0.0) + overlap(words, names[nid]) for nid in node_ids],
                        [], [], [], [])
    for e in {e["id"]: e for e in edges}.values():
        relevance = overlap(words, e["evidence"]) + edge_hits.get(e["id"], 0.0)
        cost = edge_cost * (1.0 - min(relevance, 0.9))
        if e["relation"] in STRUCTURAL_RELATIONS:
            cost *= STRUCTURAL_COST_FACTOR
        graph.edges.append((index[e["src"]], index[e["dst"]]))
        graph.edge_rows.append(e)
        graph.edge_prizes.append(relevance * float(e["confidence"]))
        graph.edge_costs.append(cost)
    return graph


def enrich_context(
    query: str, store: GraphStore, graph_index, config: AgentConfig, embeddings: EmbeddingsConfig, entry_points: int,
    pagerank: dict[str, float] | None = None,
) -> Subgraph:
    """`pagerank`: entity id -> PageRank mass relative to the top entity (GraphRank's), joining the entries."""
    entries, edge_hits = entry_scores(search_graph(graph_index, query, entry_points, embeddings), store)
    for nid, mass in (pagerank or {}).items():
        entries[nid] = max(entries.get(nid, 0.0), mass)
    if not entries:
        return Subgraph()
    hood = store.neighbors(list(entries), limit=config.neighbor_limit)
    g = prize_graph(query, hood.edges, hood.node_names(), entries, edge_hits, config.edge_cost)
    result = solve_pcst(len(g.node_ids), g.edges, g.node_prizes, g.edge_prizes, g.edge_costs, config.max_nodes, config.max_edges)
    facts = [Edge.from_row(g.edge_rows[i], g.edge_prizes[i] + g.node_prizes[g.edges[i][0]] + g.node_prizes[g.edges[i][1]])
             for i in result.edges]
    facts.sort(key=lambda f: (-f.score, f.id))
    nodes = [{"id": g.node_ids[i], "name": g.names[g.node_ids[i]], "prize": round(g.node_prizes[i], 4)} for i in result.nodes]
    return Subgraph(nodes, facts, sorted(entries), (len(g.node_ids), len(g.edge_rows)))
