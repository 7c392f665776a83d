"""Tool 1, EnrichContext: txtai entry points -> DuckDB 1-hop neighbourhood -> PCST subgraph.

Prizes: entry nodes get their search score; every candidate node and edge also gets a lexical
relevance (share of the query's content words in its name / evidence sentence), which is cheap and
lets a fact two steps from the entry points compete. Edge costs fall with relation relevance, and
structural edges (co-occurrence, mentions) cost a little more than named relations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.agent.pcst import solve_pcst
from enrich_rag.config import AgentConfig, EmbeddingsConfig
from enrich_rag.index.graph_index import STRUCTURAL_RELATIONS, search_graph
from enrich_rag.storage.graph_store import GraphStore

_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or is was were are be been being what which who whom whose "
    "where when why how did does do that this these those it its as than then both either also has have had "
    "his her their there into about same more most many much one two".split()
)
STRUCTURAL_COST_FACTOR = 1.5


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in STOPWORDS and len(w) > 1}


def overlap(query_words: set[str], text: str) -> float:
    if not query_words:
        return 0.0
    return len(query_words & content_words(text)) / len(query_words)


@dataclass(frozen=True)
class Fact:
    """One edge of the subgraph: a triple, the sentence it came from, and where that sentence lives."""

    edge_id: str
    subject: str
    relation: str
    object: str
    evidence: str
    chunk_id: str
    doc_id: str
    partition: str
    score: float
    src: str = ""  # node ids, so the subgraph can be drawn
    dst: str = ""


@dataclass
class Subgraph:
    nodes: list[dict[str, Any]] = field(default_factory=list)  # id, name, prize
    facts: list[Fact] = field(default_factory=list)  # best first
    entry_ids: list[str] = field(default_factory=list)
    candidates: tuple[int, int] = (0, 0)  # candidate nodes, edges before PCST

    def evidence(self, limit: int) -> list[Fact]:
        """Distinct evidence sentences, best first (several edges often share one sentence)."""
        seen: set[str] = set()
        out = []
        for fact in self.facts:
            if fact.evidence not in seen:
                seen.add(fact.evidence)
                out.append(fact)
        return out[:limit]


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
    facts = [
        Fact(e["id"], e["src_name"], e["relation"], e["dst_name"], e["evidence"], e["chunk_id"], e["doc_id"],
             e["partition"], edge_prizes[i] + node_prizes[edge_list[i][0]] + node_prizes[edge_list[i][1]], e["src"], e["dst"])
        for i, e in ((i, edge_rows[i]) for i in result.edges)
    ]
    facts.sort(key=lambda f: (-f.score, f.edge_id))
    nodes = [{"id": node_ids[i], "name": names[node_ids[i]], "prize": round(node_prizes[i], 4)} for i in result.nodes]
    return Subgraph(nodes, facts, sorted(entry_scores), (len(node_ids), len(edge_rows)))
