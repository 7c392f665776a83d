"""Tool 1, EnrichContext: txtai entry points -> DuckDB 1-hop neighbourhood -> PCST subgraph.

Prizes: entry nodes get their search score; every candidate node and edge also gets a lexical
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

    def evidence(self, limit: int) -> list[Edge]:
        """Distinct evidence sentences, best first (several edges often share one sentence)."""
        seen: set[str] = set()
        out = []
        for fact in self.facts:
            if fact.evidence not in seen:
                seen.add(fact.evidence)
                out.append(fact)
        return out[:limit]

    def to_dict(self) -> dict[str, Any]:
        """The PCST subgraph as the web page draws it."""
        return {"nodes": self.nodes, "edges": [dataclasses.asdict(f) for f in self.facts], "entry_ids": self.entry_ids}


def enrich_context(
    query: str, store: GraphStore, graph_index, config: AgentConfig, embeddings: EmbeddingsConfig, entry_points: int
) -> Subgraph:
    hits = search_graph(graph_index, query, entry_points, embeddings)
    entry_scores: dict[str, float] = {}
    hit_edges = [h["id"] for h in hits if h.get("kind") == "edge"]
    for h in hits:
        if h.get("kind") == "node":
            entry_scores[h["id"]] = max(entry_scores.get(h["id"], 0.0), float(h["score"]))
    edge_hit_scores = {h["id"]: float(h["score"]) for h in hits if h.get("kind") == "edge"}
    for edge in store.edges_by_ids(hit_edges):
        for end in (edge["src"], edge["dst"]):
            entry_scores[end] = max(entry_scores.get(end, 0.0), edge_hit_scores.get(edge["id"], 0.0))
    if not entry_scores:
        return Subgraph()

    hood = store.neighbors(list(entry_scores), limit=config.neighbor_limit)
    edges = {e["id"]: e for e in hood.edges}
    names = hood.node_names()
    node_ids = sorted(names)
    index = {nid: i for i, nid in enumerate(node_ids)}
    words = content_words(query)

    node_prizes = [entry_scores.get(nid, 0.0) + overlap(words, names[nid]) for nid in node_ids]
    edge_list, edge_rows, edge_prizes, edge_costs = [], [], [], []
    for e in edges.values():
        relevance = overlap(words, e["evidence"]) + edge_hit_scores.get(e["id"], 0.0)
        cost = config.edge_cost * (1.0 - min(relevance, 0.9))
        if e["relation"] in STRUCTURAL_RELATIONS:
            cost *= STRUCTURAL_COST_FACTOR
        edge_list.append((index[e["src"]], index[e["dst"]]))
        edge_rows.append(e)
        edge_prizes.append(relevance * float(e["confidence"]))
        edge_costs.append(cost)

    result = solve_pcst(len(node_ids), edge_list, node_prizes, edge_prizes, edge_costs, config.max_nodes, config.max_edges)
    facts = [Edge.from_row(edge_rows[i], edge_prizes[i] + node_prizes[edge_list[i][0]] + node_prizes[edge_list[i][1]])
             for i in result.edges]
    facts.sort(key=lambda f: (-f.score, f.id))
    nodes = [{"id": node_ids[i], "name": names[node_ids[i]], "prize": round(node_prizes[i], 4)} for i in result.nodes]
    return Subgraph(nodes, facts, sorted(entry_scores), (len(node_ids), len(edge_rows)))
