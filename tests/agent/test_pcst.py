import networkx as nx

from enrich_rag.agent.pcst import solve_pcst


def test_path_with_prized_ends_returns_the_whole_path():
    # The known case where the old pcst_fast wheel returned vertices [0,0,0,0] under numpy 2.
    result = solve_pcst(4, [(0, 1), (1, 2), (2, 3)], [5, 0, 0, 5], [0, 0, 0], [1, 1, 1], 10, 10)
    assert result.nodes == [0, 1, 2, 3] and result.edges == [0, 1, 2]


def _is_tree(nodes, edges, edge_list):
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edge_list[e] for e in edges)
    return nx.is_tree(g)


def test_tree_is_connected_keeps_high_prize_nodes_and_drops_costly_detours():
    edge_list = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 5), (5, 6), (6, 7), (7, 8), (8, 4)]
    prizes = [4, 0, 0, 0, 4, 0, 0, 0, 0, 0.1]
    result = solve_pcst(10, edge_list, prizes, [0] * 9, [0.5] * 9, 20, 20)
    assert {0, 4} <= set(result.nodes)
    assert _is_tree(result.nodes, result.edges, edge_list)
    assert set(result.edges) == {0, 1, 2, 3}  # the short path, not the 5-edge detour
    assert 9 not in result.nodes  # isolated low prize not worth anything


def test_edge_prize_makes_a_relevant_fact_worth_including():
    edge_list = [(0, 1), (0, 2)]
    without = solve_pcst(3, edge_list, [1, 0, 0], [0, 0], [0.6, 0.6], 10, 10)
    assert without.nodes == [0]
    with_fact = solve_pcst(3, edge_list, [1, 0, 0], [0, 2.0], [0.6, 0.6], 10, 10)
    assert with_fact.edges == [1] and with_fact.nodes == [0, 2]


def test_budget_is_respected_and_result_stays_connected():
    star = [(0, i) for i in range(1, 30)]
    result = solve_pcst(30, star, [1.0] * 30, [0.0] * 29, [0.1] * 29, 6, 5)
    assert len(result.nodes) <= 6 and len(result.edges) <= 5
    assert _is_tree(result.nodes, result.edges, star)


def _edge(eid, src, dst, relation, evidence, confidence=1.0):
    return {"id": eid, "src": src, "dst": dst, "relation": relation, "evidence": evidence, "confidence": confidence}


def test_prizes_follow_query_words_and_search_hits_and_structural_edges_cost_more():
    from enrich_rag.agent.enrich_context import STRUCTURAL_COST_FACTOR, prize_graph
    from enrich_rag.storage.schema import COOCCURS

    names = {"a": "Christopher Nolan", "b": "London", "c": "Inception"}
    edges = [_edge("e1", "a", "b", "born in", "Nolan was born in London."),
             _edge("e2", "a", "c", "directed", "Nolan directed Inception.", confidence=0.5),
             _edge("e3", "b", "c", COOCCURS, "Something unrelated entirely.")]
    g = prize_graph("Where was Nolan born?", edges, names, {"c": 0.7}, {"e2": 0.2}, edge_cost=1.0)
    prize = dict(zip(g.node_ids, g.node_prizes))
    assert prize["c"] == 0.7  # entry score only: no query word in "Inception"
    assert prize["a"] == 0.5  # "nolan" is one of the query's two content words ("nolan", "born")
    assert prize["b"] == 0.0
    by_id = {row["id"]: i for i, row in enumerate(g.edge_rows)}
    assert g.edge_prizes[by_id["e1"]] == 1.0  # both query words in its sentence
    assert g.edge_prizes[by_id["e2"]] == (0.5 + 0.2) * 0.5  # half the words + its search score, x confidence
    assert g.edge_prizes[by_id["e3"]] == 0.0
    assert g.edge_costs[by_id["e1"]] < g.edge_costs[by_id["e2"]] < g.edge_costs[by_id["e3"]]
    assert g.edge_costs[by_id["e1"]] == 1.0 * (1 - 0.9)  # relevance caps at 0.9: no edge is free
    assert g.edge_costs[by_id["e3"]] == 1.0 * STRUCTURAL_COST_FACTOR
    assert [g.node_ids[i] for i in g.edges[by_id["e1"]]] == ["a", "b"]
