"""Entity-first selection on real bundled HotpotQA questions, over a real txtai index of their pooled passages."""

import dataclasses
import json

import pytest

from enrich_rag.config import CorpusConfig
from enrich_rag.evidence.entity_ranker import EntityFirstRanker
from enrich_rag.evidence.query_analysis import BRIDGE, COMPARISON, analyze_query
from enrich_rag.evidence.rerank import make_reranker
from enrich_rag.evidence.select import corpus_retrieval, gaps, select_evidence
from enrich_rag.index.embeddings import open_index
from enrich_rag.stages.corpus import prepare_corpus
from enrich_rag.stages.indexes import build_corpus_index
from enrich_rag.storage.passages import PassageStore
from tests.conftest import PROJECT_ROOT, write_jsonl

HOTPOT = PROJECT_ROOT / "data/benchmarks/hotpotqa_distractor/dev.jsonl"
POOL = 40  # questions whose paragraphs form the shared retrieval pool (~400 passages)


@pytest.fixture(scope="module")
def questions():
    return [json.loads(line) for line in HOTPOT.read_text(encoding="utf-8").splitlines()[:POOL]]


@pytest.fixture(scope="module")
def pooled(tmp_path_factory, questions):
    from tests.conftest import load_config

    tmp = tmp_path_factory.mktemp("pool")
    source = write_jsonl(tmp / "questions.jsonl", questions)
    base = load_config(PROJECT_ROOT / "params.yaml")
    config = dataclasses.replace(
        base,
        corpus=CorpusConfig(source=str(source), format="benchmark"),
        paths=dataclasses.replace(base.paths, chunks=str(tmp / "chunks.parquet"), corpus_index=str(tmp / "corpus")),
    )
    prepare_corpus(config)
    build_corpus_index(config)
    return config, corpus_retrieval(config, open_index(config.paths.corpus_index, config.embeddings), PassageStore(config.paths.chunks))


def _select(pooled, nlp, question, **overrides):
    config, retrieval = pooled
    evidence = dataclasses.replace(config.evidence, **overrides)
    analysis = analyze_query(question["question"], nlp)
    return analysis, select_evidence(analysis, retrieval, evidence, make_reranker("entity", EntityFirstRanker(), None), nlp)


@pytest.mark.parametrize("index, bridge", [(11, "Vydūnas"), (15, "Commercial Solvents Corporation")])
@pytest.mark.slow  # builds a 400-passage index
def test_bridge_found_and_micro_query_brings_second_hop(pooled, nlp, questions, index, bridge):
    question = questions[index]
    analysis, selection = _select(pooled, nlp, question)
    assert analysis.kind == BRIDGE
    titles = [p.title for p in selection.passages]
    assert len(titles) == pooled[0].evidence.k  # fixed budget
    assert bridge in selection.record["bridges_found"]
    swapped = {p.title for p in selection.passages if any(p.id in r["swapped_in"] for r in selection.record["rounds"])}
    assert bridge in swapped, str(selection.record)  # it was not in the first top-k: a micro-query brought it
    assert set(titles) == set(question["supporting_titles"])
    # Ablation: without micro-queries the second hop stays out of the top-k.
    _, plain = _select(pooled, nlp, question, micro_queries=False)
    assert bridge not in [p.title for p in plain.passages]
    assert plain.record["stop_reason"] == "micro_queries_off"


@pytest.mark.slow  # builds a 400-passage index
def test_comparison_is_split_per_entity(pooled, nlp, questions):
    question = questions[0]  # Which continent are both magazines, Sayidaty and Closer published?
    analysis, selection = _select(pooled, nlp, question)
    assert analysis.kind == COMPARISON
    assert {"Sayidaty", "Closer"} <= set(analysis.entities)
    assert len(analysis.parts) == len(analysis.entities)
    assert "Sayidaty" in [p.title for p in selection.passages]


@pytest.mark.slow  # builds a 400-passage index
def test_selection_stops_with_a_recorded_reason(pooled, nlp, questions):
    reasons = set()
    for question in questions[:10]:
        _, selection = _select(pooled, nlp, question)
        record = selection.record
        reasons.add(record["stop_reason"])
        assert len(record["rounds"]) <= pooled[0].evidence.rounds
        if record["stop_reason"] == "diminishing_returns":
            assert record["rounds"][-1]["gain"] < pooled[0].evidence.min_coverage_gain
        elif record["stop_reason"] == "max_rounds":
            assert all(r["gain"] >= pooled[0].evidence.min_coverage_gain for r in record["rounds"])
    assert "diminishing_returns" in reasons and "complete" in reasons


def test_a_bridge_needs_a_passage_of_its_own():
    # "In Person" names Ginger Rogers in its lead but says nothing about her birth: her own passage
    # (by title) is the second hop; a query entity is covered by a lead mention.
    film = {"id": "a", "title": "In Person (film)", "content": "In Person is a 1935 film starring Ginger Rogers."}
    actress = {"id": "b", "title": "Ginger Rogers", "content": "Ginger Rogers (born 1911) was an American actress."}
    assert gaps([film], ["In Person"], ["Ginger Rogers"]) == ["Ginger Rogers"]
    assert gaps([film, actress], ["In Person"], ["Ginger Rogers"]) == []
    assert gaps([actress], ["In Person"], []) == ["In Person"]


def test_possessive_ends_an_entity_name(nlp):
    analysis = analyze_query("What Was the name of Juan Manuel Márquez's  WBO champion holding younger brother?", nlp)
    assert "Juan Manuel Márquez" in analysis.entities
    assert not any("'s" in e for e in analysis.entities)


def test_a_conjunction_separates_names(nlp):
    analysis = analyze_query("Are both Cypress and Ajuga genera?", nlp)
    assert {"Cypress", "Ajuga"} <= set(analysis.entities) and analysis.kind == COMPARISON
    church = analyze_query("What do the Church of St. Mary of the Spring and Hagia Irene have in common?", nlp)
    assert "Hagia Irene" in church.entities and any(e.startswith("Church of St. Mary") for e in church.entities)
    # NER reads the two titles as one WORK_OF_ART; "or" offers two ("and" inside a title does not split it).
    films = analyze_query("Which musical fantasy film is older, Bedknobs and Broomsticks or The Muppet Christmas Carol?", nlp)
    assert {"Bedknobs and Broomsticks", "Muppet Christmas Carol"} <= set(films.entities) and films.kind == COMPARISON


def _overlap_retrieval(passages):
    """Word-overlap search over a handful of passages: the Retrieval interface with a tiny retriever
    of the test's own, so the ranking each passage gets is known."""
    from enrich_rag.evidence.select import Retrieval
    from enrich_rag.text import content_words

    def corpus(query, limit):
        words = content_words(query)
        scored = sorted(((len(words & content_words(p.content)) / max(len(words), 1), p) for p in passages), key=lambda sp: -sp[0])
        return [p.scored(s) for s, p in scored[:limit] if s > 0]

    return Retrieval(corpus)


def test_a_passage_the_graph_ranks_and_the_evidence_names_becomes_the_second_hop(nlp):
    # "named for the pronghorn" is no named entity, so the bridge finder misses it; PageRank reaches
    # the Pronghorn page through the graph, and the selected passage names it: a bridge.
    from enrich_rag.evidence.query_analysis import QueryAnalysis
    from enrich_rag.storage.passages import Passage

    town = Passage(
        "t",
        "t",
        "Antelope, Kansas",
        "Antelope is a community in Marion County. It was named for the pronghorn, an animal once common there.",
    )
    resort = Passage("h", "h", "Hartbeespoort", "Hartbeespoort is a town named after an antelope species, the hartebeest.")
    animal = Passage("p", "p", "Pronghorn", "The pronghorn is a species of artiodactyl mammal of North America.")
    analysis = QueryAnalysis(
        "What species of animal was the town of Antelope, Kansas named after?", ("Antelope, Kansas",), BRIDGE, "species animal town named"
    )
    retrieval = _overlap_retrieval([town, resort, animal])
    ranked = [town.scored(1.0), animal.scored(0.6), resort.scored(0.3)]  # PageRank's order
    from tests.conftest import load_config

    config = load_config(PROJECT_ROOT / "params.yaml")
    chosen = {}
    for on in (False, True):
        evidence = dataclasses.replace(config.evidence, k=2, graph_bridges=on)
        selection = select_evidence(analysis, retrieval, evidence, make_reranker("entity", EntityFirstRanker(), None), nlp, ranked)
        chosen[on] = {p.title for p in selection.passages}
    assert chosen[False] == {"Antelope, Kansas", "Hartbeespoort"}
    assert chosen[True] == {"Antelope, Kansas", "Pronghorn"}
