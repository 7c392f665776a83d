"""Prize-Collecting Steiner Tree over a candidate subgraph, G-Retriever style.

Nodes earn prizes (query relevance); edges cost. An edge that itself earns a prize (its evidence
matches the query) becomes a virtual node between its two ends, so the solver can choose to pay for
a relevant fact even when its end nodes are unremarkable. `pcst_fast` (from `pcst-fast2`) solves
with one tree and GW pruning, unrooted (root -1) or grown from a given root (the question). When the
tree exceeds its budget (nodes, edges, and `max_counted` of the `counted` nodes: the passages a reader
can afford), costs are raised and the problem re-solved, which keeps the answer a connected tree
rather than a truncated one; where that loses what the budget could hold, the smallest tree over
budget is trimmed leaf by leaf instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BUDGET_RETRIES = 8  # bisection steps on the cost scale
MAX_SCALE_LOG2 = 10.0


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
    counted: list[int] | None = None,
    max_counted: int | None = None,
    root: int = -1,
) -> PCSTResult:
    from pcst_fast import pcst_fast

    if n_nodes == 0:
        return PCSTResult([], [])
    counted_set = set(counted or ())
    limit = max_counted if max_counted is not None else n_nodes

    def within(r: PCSTResult) -> bool:
        return len(r.nodes) <= max_nodes and len(r.edges) <= max_edges and len(counted_set.intersection(r.nodes)) <= limit

    def solve(scale: float) -> PCSTResult:
        return _solve_once(
            pcst_fast,
            n_nodes,
            edges,
            node_prizes=node_prizes,
            edge_prizes=edge_prizes,
            edge_costs=[c * scale for c in edge_costs],
            root=root,
        )

    result = solve(1.0)
    if within(result):
        return result
    # The largest tree within budget: bisect the cost scale (log2) between 1 and 2^MAX_SCALE_LOG2.
    low, high, best = 0.0, MAX_SCALE_LOG2, None
    for _ in range(BUDGET_RETRIES):
        middle = (low + high) / 2
        trial = solve(2.0**middle)
        if within(trial):
            best, high = trial, middle
        else:
            low, result = middle, trial
    if best is None:
        top = solve(2.0**MAX_SCALE_LOG2)
        best = top if within(top) else None
        result = top if best is None else result
    # GW can drop a whole branch at once as costs rise (three equal passages under one entity: all of
    # them or none), so the cheapest tree within budget may hold fewer passages than the budget, even
    # none. The smallest tree over budget, trimmed leaf by leaf, then keeps more.
    trimmed = _trim(result, edges, node_prizes, edge_prizes=edge_prizes, within=within, root=root)
    if best is None or len(counted_set.intersection(trimmed.nodes)) > len(counted_set.intersection(best.nodes)):
        return trimmed
    return best


def _solve_once(pcst_fast, n_nodes, edges, node_prizes, edge_prizes, edge_costs, root: int = -1) -> PCSTResult:
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
        best = root if root >= 0 else int(np.argmax(node_prizes))
        return PCSTResult([best], [])
    vertices, chosen = pcst_fast(
        np.asarray(pcst_edges, dtype=np.int64),
        np.asarray(prizes, dtype=np.float64),
        np.asarray(costs, dtype=np.float64),
        root,
        1,
        "gw",
        0,
    )
    chosen_edges = {origin[e] for e in chosen if origin[e] >= 0}
    chosen_edges |= {virtual[v] for v in vertices if v in virtual}
    nodes = sorted(int(v) for v in vertices if v < n_nodes)
    # A virtual node pulls in both ends of its edge.
    for e in chosen_edges:
        nodes += [n for n in edges[e] if n not in nodes]
    return PCSTResult(sorted(set(nodes)), sorted(chosen_edges))


def _trim(result: PCSTResult, edges, node_prizes, edge_prizes, within, root: int = -1) -> PCSTResult:
    """Last resort: drop the least valuable leaf edges until within budget (stays a tree, keeps the root)."""
    kept = set(result.edges)

    def tree(kept_edges: set[int]) -> PCSTResult:
        nodes = sorted({n for e in kept_edges for n in edges[e]}) or ([root] if root >= 0 else result.nodes[:1])
        return PCSTResult(nodes, sorted(kept_edges))

    while kept and not within(tree(kept)):
        degree: dict[int, int] = {}
        for e in kept:
            for n in edges[e]:
                degree[n] = degree.get(n, 0) + 1
        # A leaf edge is worth what it alone brings: its own prize and its leaf's (the node that goes
        # with it), not the prize of the inner node that stays.
        leaves = {e: [n for n in edges[e] if degree[n] == 1 and n != root] for e in kept}
        leaves = {e: ends for e, ends in leaves.items() if ends}
        worst = min(leaves or kept, key=lambda e: edge_prizes[e] + max((node_prizes[n] for n in leaves.get(e, ())), default=0.0))
        kept.discard(worst)
    return tree(kept)
