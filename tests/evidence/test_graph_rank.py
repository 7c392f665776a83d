"""Graph retrieval on a graph built in the test by the real stages (spaCy, MiniLM, DuckDB over Parquet)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from enrich_rag.evidence.graph_rank import personalized_pagerank, rank_passages
from tests.conftest import write_jsonl

QUESTION = "In which city was the director of the film Zanthorium born?"
# Zanthorium's page names its director; his page names the city but shares no word with the question
# beyond "born". The distractors talk about directors, films, cities and births: dense search likes them.
BRIDGE_CORPUS = [
    {
        "id": "zanthorium",
        "title": "Zanthorium",
        "text": "Zanthorium is a 2004 science fiction film. Zanthorium was directed by Korvel Imbrecht.",
    },
    {
        "id": "imbrecht",
        "title": "Korvel Imbrecht",
        "text": "Korvel Imbrecht is a painter and screenwriter. Imbrecht was born in Tarsovia in 1961.",
    },
    {
        "id": "d1",
        "title": "Film directors",
        "text": "A film director is the person who directs the making of a film. Many film directors were born in a big city.",
    },
    {
        "id": "d2",
        "title": "Cinema city",
        "text": "The city of cinema is where the film industry was born, and where every director of a film works.",
    },
    {
        "id": "d3",
        "title": "Science fiction film",
        "text": "Science fiction film is a film genre. Directors of science fiction films were often born in cities.",
    },
    {"id": "d4", "title": "Birthplace", "text": "A birthplace is the city or town where a person, such as a film director, was born."},
]


@pytest.fixture
def bridge_config(small_config, spacy_extractor, tmp_path):
    from enrich_rag.stages.corpus import prepare_corpus
    from enrich_rag.stages.indexes import build_corpus_index, build_graph_index
    from enrich_rag.stages.seed_graph import build_seed_graph

    source = write_jsonl(tmp_path / "bridge.jsonl", BRIDGE_CORPUS)
    config = dataclasses.replace(
        small_config,
        corpus=dataclasses.replace(small_config.corpus, source=str(source)),
        extraction=dataclasses.replace(small_config.extraction, seed_share=1.0),
    )
    prepare_corpus(config)
    build_corpus_index(config)
    build_seed_graph(config, extractor=spacy_extractor)
    build_graph_index(config)
    return config


def _rank(config, nlp, keep_open=False):
    from enrich_rag.evidence.query_analysis import analyze_query
    from enrich_rag.resources import Resources

    resources = Resources(config)
    analysis = analyze_query(QUESTION, nlp, resources.store)
    retrieval = resources.retrieval()
    ranking = rank_passages(
        QUESTION,
        retrieval.corpus(QUESTION, config.retrieval.graph_passages),
        store=resources.store,
        graph_index=resources.graph_index,
        passages=resources.passages,
        config=config.retrieval,
        embeddings=config.embeddings,
        query_entities=analysis.entities,
        limit=6,
    )
    dense = [p.doc_id for p in retrieval.corpus(QUESTION, 6)]
    if keep_open:
        return ranking, analysis, resources
    resources.close()
    return ranking, dense


def test_pagerank_reaches_the_second_hop_that_dense_search_ranks_low(bridge_config, nlp):
    ranking, dense = _rank(bridge_config, nlp)
    graph = [p.doc_id for p in ranking.passages]
    assert dense.index("imbrecht") >= 2, f"the test corpus must make dense search miss the second hop: {dense}"
    assert set(graph[:2]) == {"zanthorium", "imbrecht"}, graph
    record = ranking.record()
    assert record["pagerank_top"][0]["chunk_id"].split("::")[0] in {"zanthorium", "imbrecht"}
    assert record["pagerank_graph"][0] > len(BRIDGE_CORPUS)  # entities and passages walked together


def test_pagerank_walks_title_links_of_passages_the_seed_never_extracted(bridge_config, nlp, spacy_extractor):
    """Every passage is a node through its title link, extracted or not: the bridge page is reachable
    from the facts of the first hop even before EnrichGraph reads it."""
    from enrich_rag.stages.indexes import build_graph_index
    from enrich_rag.stages.seed_graph import build_seed_graph
    from enrich_rag.storage.passages import read_passages

    every = read_passages(bridge_config.paths.chunks)
    unread = [c for c in every if c.doc_id == "imbrecht"]
    build_seed_graph(bridge_config, extractor=_SkipChunks(spacy_extractor, {c.id for c in unread}), chunks=every)
    build_graph_index(bridge_config)
    ranking, _ = _rank(bridge_config, nlp)
    assert "imbrecht" in [p.doc_id for p in ranking.passages][:2]


class _SkipChunks:
    """The real spaCy extractor, blind to some chunks (a seed that has not read them yet)."""

    def __init__(self, extractor, skip: set[str]):
        self.extractor, self.skip, self.name = extractor, skip, extractor.name

    def extract(self, chunks):
        return self.extractor.extract([c for c in chunks if c.id not in self.skip])


def test_personalized_pagerank_keeps_mass_and_follows_links():
    # 0 - 1 - 2, and 3 alone: mass starts at 0, reaches 2 only through 1, and node 3 returns its share.
    reset = np.array([1.0, 0.0, 0.0, 1.0])
    scores = personalized_pagerank([(0, 1, 1.0), (1, 2, 1.0)], reset, damping=0.5)
    assert scores.sum() == pytest.approx(1.0)
    assert scores[1] > scores[2] > 0
    # A dangling node hands its mass back to the restart vector: p3 = (1 - d) r3 / (1 - d r3).
    assert scores[3] == pytest.approx(0.25 / 0.75)


def test_the_evidence_tree_reads_both_hops_and_draws_exactly_what_it_read(bridge_config, nlp):
    """The PCST tree over PageRank's neighbourhood: from the film's page, through the director it names,
    to his own page, which says where he was born; in that order, and drawn as read."""
    from enrich_rag.evidence.enrich_context import enrich_context, passage_node
    from enrich_rag.storage.ids import node_id

    ranking, analysis, resources = _rank(bridge_config, nlp, keep_open=True)
    bridge = node_id("Korvel Imbrecht")
    assert bridge in ranking.entities  # the second hop's entity carries PageRank mass though the question never names it
    agent, evidence = bridge_config.agent, bridge_config.evidence
    sub = enrich_context(QUESTION, analysis.entities, ranking, agent, evidence, 2)
    assert [p.doc_id for p in sub.passages] == ["zanthorium", "imbrecht"]  # tree order: the question's entity first
    assert bridge in {n["id"] for n in sub.nodes} and node_id("Zanthorium") in sub.entry_ids
    drawn = {n["chunk_id"] for n in sub.nodes if n["kind"] == "passage"}
    assert drawn == {p.id for p in sub.passages}  # nothing else is drawn as a passage
    assert all(e["src"] in {n["id"] for n in sub.nodes} and e["dst"] in {n["id"] for n in sub.nodes} for e in sub.edges)
    assert any(e["kind"] == "title" and e["dst"] == passage_node(sub.passages[1].id) for e in sub.edges)
    # A wider budget keeps what was read, in its order, and only appends.
    wider = enrich_context(QUESTION, analysis.entities, ranking, agent, evidence, 3, sub.evidence)
    assert wider.evidence[: len(sub.evidence)] == sub.evidence and len(wider.passages) <= 3
    resources.close()


def test_a_pointer_edge_carries_mass_one_way():
    # 0 - 1 linked both ways; 1 -> 2 only (a passage naming a page): 2 gets mass from 1 and keeps it,
    # none flows back, where an undirected edge would share it.
    reset = np.array([1.0, 0.0, 0.0])
    pointed = personalized_pagerank([(0, 1, 1.0)], reset, damping=0.5, directed=[(1, 2, 1.0)])
    both_ways = personalized_pagerank([(0, 1, 1.0), (1, 2, 1.0)], reset, damping=0.5)
    assert pointed.sum() == pytest.approx(1.0) and both_ways.sum() == pytest.approx(1.0)
    assert pointed[2] > 0
    assert pointed[1] < both_ways[1]  # nothing comes back from 2


@pytest.mark.parametrize("seed", range(5))
def test_personalized_pagerank_agrees_with_networkx(seed):
    """The hand-written walk against networkx.pagerank on random weighted graphs with two-way edges,
    one-way (pointer) edges, duplicates, dangling nodes and a personalised reset."""
    import networkx as nx

    rng = np.random.default_rng(seed)
    n = 40
    pairs = [(int(u), int(v)) for u, v in rng.integers(0, n - 5, size=(90, 2)) if u != v]  # the last 5 nodes dangle
    both = [(u, v, float(rng.uniform(0.1, 3.0))) for u, v in pairs[:70]]
    one_way = [(u, v, float(rng.uniform(0.1, 3.0))) for u, v in pairs[70:]]
    reset = np.zeros(n)
    reset[rng.choice(n, size=4, replace=False)] = rng.uniform(0.5, 2.0, size=4)
    damping = 0.5 + 0.4 * rng.random()

    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    for u, v, w in [*both, *[(v, u, w) for u, v, w in both], *one_way]:
        graph.add_edge(u, v, weight=graph.get_edge_data(u, v, {"weight": 0.0})["weight"] + w)
    personal = {i: float(reset[i]) for i in range(n)}
    expected = nx.pagerank(graph, alpha=damping, personalization=personal, dangling=personal, weight="weight", tol=1e-12, max_iter=1000)
    ours = personalized_pagerank(both, reset, damping, directed=one_way)
    assert np.allclose(ours, [expected[i] for i in range(n)], atol=1e-6)
    assert ours.sum() == pytest.approx(1.0)


def test_entity_first_choice_joins_the_question_and_is_the_first_context(bridge_config, nlp):
    """Entity-first's passages reach the tree from the question itself, so a second hop the seed never
    linked does not need another passage as a relay that would take the budget's place."""
    from enrich_rag.evidence.enrich_context import ROOT, enrich_context, passage_node, tree_graph

    ranking, analysis, resources = _rank(bridge_config, nlp, keep_open=True)
    agent, evidence = bridge_config.agent, bridge_config.evidence
    chosen = [p for p in resources.passages.by_ids([p.id for p in ranking.passages]) if p.doc_id in {"imbrecht", "d4"}]
    g = tree_graph(QUESTION, analysis.entities, ranking, list(ranking.passages), agent, evidence, [p.id for p in chosen])
    asked = {r["dst"] for r in g.rows if r["src"] == ROOT}
    assert {passage_node(p.id) for p in chosen} <= asked
    sub = enrich_context(QUESTION, analysis.entities, ranking, agent, evidence, 2, selected=chosen)
    assert {p.doc_id for p in sub.passages} == {"imbrecht", "d4"}
    resources.close()


def test_the_page_the_first_passage_names_is_read_right_after_it_where_the_walk_ranked_it_low(bridge_config):
    """`retrieval.follow_first_passages`: the titles the hybrid's first passage writes are named at question
    time (the corpus's title gazetteer over the real passage store), whether or not the seed linked them."""
    from enrich_rag.evidence.graph_rank import GraphRanking
    from enrich_rag.evidence.retriever import Retriever
    from enrich_rag.resources import Resources

    found = {}
    for follow in (0, 1):
        config = dataclasses.replace(
            bridge_config, retrieval=dataclasses.replace(bridge_config.retrieval, hybrid_first_passages=1, follow_first_passages=follow)
        )
        resources = Resources(config)
        try:
            hits = resources.passages.by_doc_ids(["zanthorium", "d1", "d2"])
            hits = sorted(hits, key=lambda p: p.doc_id != "zanthorium")  # the hybrid's first: the film's page
            walked = GraphRanking(resources.passages.by_doc_ids(["d3", "d4"]))  # a walk that missed the director
            found[follow] = [p.doc_id for p in Retriever(resources, config.evidence).order(walked, hits, 3)]
        finally:
            resources.close()
    assert found == {0: ["zanthorium", "d3", "d4"], 1: ["zanthorium", "imbrecht", "d3"]}
