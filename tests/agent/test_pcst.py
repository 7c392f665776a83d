import networkx as nx

from enrich_rag.evidence.pcst import solve_pcst


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


def test_a_passage_budget_is_a_connected_tree_from_the_root():
    """Question root 0; entities 1 and 3; passages 2 and 4: a budget of one passage keeps the better one, still a tree."""
    edges = [(0, 1), (1, 2), (0, 3), (3, 4)]
    both = solve_pcst(5, edges, [0, 1, 2, 1, 2.5], [0] * 4, [0.05, 0.2, 0.05, 0.2], 24, 24, counted=[2, 4], max_counted=2, root=0)
    assert set(both.nodes) == {0, 1, 2, 3, 4} and _is_tree(both.nodes, both.edges, edges)
    one = solve_pcst(5, edges, [0, 1, 2, 1, 2.5], [0] * 4, [0.05, 0.2, 0.05, 0.2], 24, 24, counted=[2, 4], max_counted=1, root=0)
    assert 0 in one.nodes and 4 in one.nodes and 2 not in one.nodes and _is_tree(one.nodes, one.edges, edges)


def test_a_branch_that_drops_whole_as_costs_rise_is_trimmed_to_the_budget():
    """Root 0 reaches entity 1, which links three equal passages: raising the costs drops all three at
    once (never two), so the within-budget solve alone would hand the reader nothing."""
    edges = [(0, 1), (1, 2), (1, 3), (1, 4)]
    prizes = [0, 0, 1.0, 1.0, 1.0]
    result = solve_pcst(5, edges, prizes, [0] * 4, [1.0, 0.1, 0.1, 0.1], 24, 24, counted=[2, 3, 4], max_counted=2, root=0)
    assert len({2, 3, 4} & set(result.nodes)) == 2
    assert {0, 1} <= set(result.nodes) and _is_tree(result.nodes, result.edges, edges)


def test_trimming_drops_the_leaf_worth_least_not_the_one_under_the_poorest_inner_node():
    """Over budget (four passages, three allowed): leaf passage 3 (prize 500) hangs off entity 2, an inner
    node without a prize; leaf passage 4 is worth 2. The trim drops 4: a leaf is worth its own prize, not
    its inner end's (read that way, 3 counted as 0 and went)."""
    from enrich_rag.evidence.pcst import PCSTResult, _trim

    edges = [(0, 1), (1, 2), (2, 3), (0, 4), (0, 5)]
    prizes = [0.0, 0.1, 0.0, 500.0, 2.0, 1000.0]
    over = PCSTResult([0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4])

    def within(r):
        return len({1, 3, 4, 5} & set(r.nodes)) <= 3

    trimmed = _trim(over, edges, prizes, [0.0] * 5, within, root=0)
    assert {3, 5} <= set(trimmed.nodes) and 4 not in trimmed.nodes


def test_a_pages_further_chunks_are_prized_below_another_page():
    """One page's continuation hangs off its entity almost for free; at full prize a wider budget would
    read it before the other page a comparison needs."""
    from enrich_rag.config import EvidenceConfig
    from enrich_rag.evidence.enrich_context import SAME_PAGE_SHARE, entity_scores, passage_prizes
    from enrich_rag.storage.passages import Passage

    text = "Song of the Eagle is a 1933 film directed by Ralph Murphy."
    a0, a1 = Passage("a::c0", "a", "Song of the Eagle", text), Passage("a::c1", "a", "Song of the Eagle", text)
    b0 = Passage("b::c0", "b", "El Santo", "El Santo is a 1960 film directed by Miguel Delgado.")
    entities = ["Song of the Eagle", "El Santo"]
    pagerank = {"a::c0": 1.0, "a::c1": 1.0, "b::c0": 0.5}
    scores = entity_scores([a0, a1, b0], entities, {}, EvidenceConfig())
    prizes = passage_prizes([a0, a1, b0], scores, pagerank=pagerank)
    full = passage_prizes([a1], scores, pagerank=pagerank)["a::c1"]
    assert prizes["a::c1"] == SAME_PAGE_SHARE * full < prizes["b::c0"]
    assert prizes["a::c0"] == full
