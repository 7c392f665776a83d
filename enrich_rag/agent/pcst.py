"""Prize-Collecting Steiner Tree over a candidate subgraph, G-Retriever style.

Nodes earn prizes (query relevance); edges cost. An edge that itself earns a prize (its evidence
matches the query) becomes a virtual node between its two ends, so the solver can choose to pay for
a relevant fact even when its end nodes are unremarkable. `pcst_fast` (from `pcst-fast2`) solves
with root -1, one tree and GW pruning. When the tree exceeds the node/edge budget, costs are raised
and the problem re-solved, which keeps the answer a connected tree rather than a truncated one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BUDGET_RETRIES = 6


@dataclass(frozen=True)
class PCSTResult:
    nodes: list[int]  # indices into the input node list
    edges: list[int]  # indices into the input edge list


def solve_pcst(
    n_nodes: int,
    edges: list[tuple[int, int]],
    node_prizes: list[float],
    edge_prizes: list[float],
    edge_costs: list[float],
    max_nodes: int,
    max_edges: int,
) -> PCSTResult:
    from pcst_fast import pcst_fast

    if n_nodes == 0:
        return PCSTResult([], [])
    scale = 1.0
    result = PCSTResult([], [])
    for _ in range(BUDGET_RETRIES):
        result = _solve_once(pcst_fast, n_nodes, edges, node_prizes, edge_prizes, [c * scale for c in edge_costs])
        if len(result.nodes) <= max_nodes and len(result.edges) <= max_edges:
            return result
        scale *= 2.0
    return _trim(result, edges, node_prizes, edge_prizes, max_nodes, max_edges)


def _solve_once(pcst_fast, n_nodes, edges, node_prizes, edge_prizes, edge_costs) -> PCSTResult:
    prizes = list(node_prizes)
    pcst_edges: list[tuple[int, int]] = []
    costs: list[float] = []
    origin: list[int] = []  # pcst edge -> input edge (direct edges only)
    virtual: dict[int, int] = {}  # virtual node -> input edge
    for i, ((u, v), prize, cost) in enumerate(zip(edges, edge_prizes, edge_costs)):
        if prize > 0:
            vnode = len(prizes)
            prizes.append(prize)
            virtual[vnode] = i
            pcst_edges += [(u, vnode), (vnode, v)]
            costs += [cost / 2, cost / 2]
            origin += [-1, -1]
        else:
            pcst_edges.append((u, v))
            costs.append(cost)
            origin.append(i)
    if not pcst_edges:
        best = int(np.argmax(node_prizes))
        return PCSTResult([best], [])
    vertices, chosen = pcst_fast(
        np.asarray(pcst_edges, dtype=np.int64), np.asarray(prizes, dtype=np.float64),
        np.asarray(costs, dtype=np.float64), -1, 1, "gw", 0,
    )
    chosen_edges = {origin[e] for e in chosen if origin[e] >= 0}
    chosen_edges |= {virtual[v] for v in vertices if v in virtual}
    nodes = sorted(int(v) for v in vertices if v < n_nodes)
    # A virtual node pulls in both ends of its edge.
    for e in chosen_edges:
        nodes += [n for n in edges[e] if n not in nodes]
    return PCSTResult(sorted(set(nodes)), sorted(chosen_edges))


def _trim(result: PCSTResult, edges, node_prizes, edge_prizes, max_nodes: int, max_edges: int) -> PCSTResult:
    """Last resort: drop the least valuable leaf edges until within budget (stays a tree)."""
    kept = set(result.edges)
    while kept and (len(kept) > max_edges or len({n for e in kept for n in edges[e]}) > max_nodes):
        degree: dict[int, int] = {}
        for e in kept:
            for n in edges[e]:
                degree[n] = degree.get(n, 0) + 1
        leaves = [e for e in kept if min(degree[n] for n in edges[e]) == 1]
        worst = min(leaves or kept, key=lambda e: edge_prizes[e] + min(node_prizes[n] for n in edges[e]))
        kept.discard(worst)
    nodes = sorted({n for e in kept for n in edges[e]}) or result.nodes[:1]
    return PCSTResult(nodes, sorted(kept))
