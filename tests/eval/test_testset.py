"""Synthetic test sets: candidates from a real graph built in the test, the filters, the writer and
the whole generator with the real default reader (Qwen2.5 1.5B on llama.cpp), and the output read
back through the evaluation's loader."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from enrich_rag.errors import InputDataError
from enrich_rag.eval.datasets import load_questions
from enrich_rag.eval.judge import CRITERIA, agreement, calibration_path, p_yes, trust_note
from enrich_rag.eval.methods import read_answer
from enrich_rag.eval.testset import filters
from enrich_rag.eval.testset.candidates import BRIDGE, COMPARISON, SINGLE_FACT, candidates
from enrich_rag.eval.testset.generate import Generator, generate_testset, progress_path, quotas, swap_in, write_question
from enrich_rag.llm.prompts import judge_prompt
from enrich_rag.stages.corpus import prepare_corpus
from enrich_rag.stages.seed_graph import build_seed_graph
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.text import content_words
from tests.conftest import write_jsonl

CORPUS = [
    {
        "id": "abbey",
        "title": "Marlow Abbey",
        "text": "Marlow Abbey is a ruined monastery in Dorset. Marlow Abbey was founded by Edith Crane in 1204.",
    },
    {"id": "crane", "title": "Edith Crane", "text": "Edith Crane was an English abbess. Edith Crane was born in Norwich."},
    {"id": "vell", "title": "Thomas Vell", "text": "Thomas Vell was an English bishop. Thomas Vell was born in York."},
    {"id": "norwich", "title": "Norwich", "text": "Norwich is a cathedral city in Norfolk, England."},
]
needs_xllamacpp = pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None, reason="xllamacpp not installed")


@pytest.fixture
def graph_config(small_config, spacy_extractor):
    """A real seed graph (spaCy) over four passages written for bridge and comparison facts."""
    write_jsonl(Path(small_config.corpus.source), CORPUS)
    prepare_corpus(small_config)
    build_seed_graph(small_config, extractor=spacy_extractor)
    return small_config


def _vell(singles):
    return [c.facts[0] for c in singles if _triples(c)[0] == ("Thomas Vell", "born in", "York")]


def _triples(candidate):
    return [(f.subject, f.relation, f.object) for f in candidate.facts]


def test_candidates_of_each_kind_come_from_the_graph(graph_config):
    with GraphStore(graph_config.paths.graph) as store:
        pools = {kind: list(it) for kind, it in candidates(store, seed=0).items()}
    assert ("Edith Crane", "born in", "Norwich") in [_triples(c)[0] for c in pools[SINGLE_FACT]]
    bridges = {tuple(_triples(c)): c for c in pools[BRIDGE]}
    chain = (("Marlow Abbey", "founded by", "Edith Crane"), ("Edith Crane", "born in", "Norwich"))
    assert chain in bridges
    assert bridges[chain].answer == "Norwich" and bridges[chain].bridge == "Edith Crane"
    assert len(bridges[chain].chunk_ids) == 2  # two passages, joined by the entity
    # Thomas Vell's passage says the same ("born in") of another person: read beside the answer passage
    assert bridges[chain].distractors == tuple(f.chunk_id for f in _vell(pools[SINGLE_FACT]))
    compared = {frozenset(c.entities): c for c in pools[COMPARISON]}
    pair = compared[frozenset({"Edith Crane", "Thomas Vell"})]  # both "born in" a place, each in a passage about them
    assert pair.answer == "no"  # Norwich and York: the facts decide it, not the writer
    again = candidates(GraphStore(graph_config.paths.graph), seed=0)
    assert [c.key for c in again[SINGLE_FACT]] == [c.key for c in pools[SINGLE_FACT]]  # the seed fixes the draw


def test_quotas_split_multi_hop_between_bridge_and_comparison():
    assert quotas(200, 0.3, 0.3) == {SINGLE_FACT: 140, BRIDGE: 42, COMPARISON: 18}
    assert quotas(10, 0.0, 0.3) == {SINGLE_FACT: 10, BRIDGE: 0, COMPARISON: 0}


@pytest.mark.parametrize(
    "question, answer, entities, bridge",
    [
        ("Where was Edith Crane born", "Norwich", ("", ""), ""),  # not a question
        ("Was Edith Crane born in Norwich?", "Norwich", ("", ""), ""),  # gives the answer away
        ("Where was the founder of Marlow Abbey, Edith Crane, born?", "Norwich", ("", ""), "Edith Crane"),  # names the bridge
        ("Who was born first, Edith Crane or Thomas Vell?", "Dorset", ("Edith Crane", "Thomas Vell"), ""),  # not an option
        ("Where?", "Norwich", ("", ""), ""),  # too short
        ("Is Thomas Vell an English bishop?", "yes", ("Edith Crane", "Thomas Vell"), ""),  # compares nothing
    ],
)
def test_well_formed_rejects_crafted_bad_questions(question, answer, entities, bridge):
    assert not filters.well_formed(question, answer, entities, bridge)


def test_well_formed_keeps_good_questions():
    assert filters.well_formed("Where was the founder of Marlow Abbey born?", "Norwich", bridge="Edith Crane")
    assert filters.well_formed("Were Edith Crane and Thomas Vell born in the same city?", "no", ("Edith Crane", "Thomas Vell"))


@pytest.mark.parametrize(
    "question, phrase, expected",
    [
        ("Where is Raven Software based?", "the developer of Necrodome", "Where is the developer of Necrodome based?"),
        ("Where is the Raven Software based?", "the developer of Necrodome", "Where is the developer of Necrodome based?"),
        ("The Raven Software is based where?", "the developer of Necrodome", "The developer of Necrodome is based where?"),
        ("Where is a Raven Software office?", "developer of Necrodome", "Where is a developer of Necrodome office?"),
        ("In which area Raven Software works?", "the developer of Necrodome", "In which area the developer of Necrodome works?"),
        ("Who founded Id Software?", "the developer of Necrodome", ""),
    ],
)
def test_a_bridge_phrase_is_swapped_in_without_a_doubled_article(question, phrase, expected):
    assert swap_in(question, "Raven Software", phrase) == expected


def test_answer_in_gold_and_duplicates():
    passages = [c["text"] for c in CORPUS[:2]]
    assert filters.answer_in_gold("Norwich", passages)
    assert not filters.answer_in_gold("York", passages)
    assert filters.answer_in_gold("yes", passages)  # entailed, not quoted: left to the reader check
    kept = [content_words("Where was the founder of Marlow Abbey born?")]
    assert filters.is_duplicate("Where was the founder of the Marlow Abbey born?", kept, 0.7)
    assert not filters.is_duplicate("When was Marlow Abbey founded?", kept, 0.7)


def test_answers_match_is_lenient_but_not_loose():
    assert filters.answers_match("the city of Norwich", "Norwich")
    assert filters.answers_match("1204", "1204")
    assert not filters.answers_match("York", "Norwich")


def test_judge_agreement_counts():
    result = agreement([True, True, False, False], [True, False, True, False])
    assert result == {"n": 4, "agreement": 0.5, "precision": 0.5, "recall": 0.5, "tp": 1, "fp": 1, "fn": 1, "tn": 1}


def test_trust_note_says_whether_the_judge_was_calibrated(tmp_path):
    assert "not calibrated" in trust_note(tmp_path, "some-model")
    path = calibration_path(tmp_path, "some-model")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"vs_em": agreement([True, False], [True, True])}))
    assert "agrees with exact match on 50% of 2 answers" in trust_note(tmp_path, "some-model")


def test_output_loads_through_the_evaluation_loader(tmp_path):
    row = {
        "id": "syn-bridge-1",
        "question": "Where was the founder of Marlow Abbey born?",
        "answers": ["Norwich"],
        "type": "bridge",
        "gold_doc_ids": ["abbey", "crane"],
        "gold_chunk_ids": ["abbey::c0", "crane::c0"],
        "facts": [],
    }
    items = load_questions(write_jsonl(tmp_path / "set.jsonl", [row]), "normalized")
    assert items[0].gold_docs == ("abbey", "crane") and items[0].answers == ("Norwich",) and items[0].type == "bridge"


@needs_xllamacpp
def test_reader_filters_reject_crafted_bad_items(default_reader):
    crane, abbey = "Edith Crane: " + CORPUS[1]["text"], "Marlow Abbey: " + CORPUS[0]["text"]
    read = lambda q, texts: read_answer(default_reader, q, texts, 16)  # noqa: E731
    assert filters.answerable(read, "Where was Edith Crane born?", "Norwich", [crane])
    assert not filters.answerable(read, "Where was Edith Crane born?", "York", [crane])  # the reference is wrong
    assert not filters.not_trivia(default_reader, "What is the capital of France?", "Paris", 16)  # the model knows it
    assert filters.not_trivia(default_reader, "Where was Edith Crane born?", "Norwich", 16)  # an invented person
    # One passage alone answers it: not a two-hop question, also when read among distractors.
    assert not filters.needs_both(read, "Where was Edith Crane born?", "Norwich", [abbey, crane])
    vell = "Thomas Vell: " + CORPUS[2]["text"]
    assert not filters.needs_both(read, "Where was Edith Crane born?", "Norwich", [abbey, crane], [vell])


@needs_xllamacpp
def test_writer_and_generator_on_a_small_graph(graph_config, default_reader, tmp_path):
    with GraphStore(graph_config.paths.graph) as store:
        pools = candidates(store, seed=0)
        bridge = next(c for c in pools[BRIDGE] if c.answer == "Norwich")
        comparison = next(c for c in pools[COMPARISON] if c.answer == "no")
    facts = [f"{f.subject}: {f.evidence}" for f in bridge.facts]
    question, answer = write_question(default_reader, bridge, facts, "", 48)
    assert answer == "Norwich" and question.endswith("?") and "\n" not in question
    assert "Edith Crane" not in question and "Marlow Abbey" in question  # the bridge told through the first hop
    question, answer = write_question(default_reader, comparison, [f.evidence for f in comparison.facts], "", 48)
    assert answer == "no" and question.endswith("?") and "||" not in question  # the facts gave the answer

    out = tmp_path / "sets/synthetic.jsonl"
    path, report = generate_testset(graph_config, default_reader, out=out, n=3, multi_hop=0.67, progress=False)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == report["total"] >= 1
    for kind, tried in report["tried"].items():  # every candidate tried is kept or counted against one filter
        rejected = sum(r["rejected"] for r in report["filters"][kind].values())
        assert tried == report["kept"].get(kind, 0) + rejected
    for row in rows:
        gold = [c["text"] for c in CORPUS if c["id"] in row["gold_doc_ids"]]
        assert filters.well_formed(row["question"], row["answers"][0]) or row["type"] == COMPARISON
        assert filters.answer_in_gold(row["answers"][0], gold)
    assert [i.id for i in load_questions(path, "normalized")] == [r["id"] for r in rows]
    assert json.loads(path.with_name("synthetic.report.json").read_text())["total"] == len(rows)


@needs_xllamacpp
def test_an_interrupted_generation_goes_on_where_it_stopped(graph_config, default_reader, tmp_path, monkeypatch):
    out, tried, real = tmp_path / "set.jsonl", [], Generator.attempt

    def stopped_after_one(self, candidate):
        if tried:
            raise KeyboardInterrupt  # what Ctrl-C (or a killed job) does mid-way
        tried.append(candidate.key)
        return real(self, candidate)

    monkeypatch.setattr(Generator, "attempt", stopped_after_one)
    with pytest.raises(KeyboardInterrupt):
        generate_testset(graph_config, default_reader, out=out, n=2, multi_hop=0.0, progress=False)
    assert json.loads(progress_path(out).read_text())["seen"] == [list(tried[0])] and not out.exists()

    monkeypatch.setattr(Generator, "attempt", lambda self, c: (tried.append(c.key), real(self, c))[1])
    _, report = generate_testset(graph_config, default_reader, out=out, n=2, multi_hop=0.0, progress=False)
    assert tried.count(tried[0]) == 1  # the candidate tried before the stop is not asked again
    assert sum(report["tried"].values()) == len(tried)  # and the counts carry over
    assert out.exists() and not progress_path(out).exists()


def test_generator_refuses_a_graph_without_facts_in_one_line(graph_config, tmp_path, monkeypatch):
    monkeypatch.setattr(GraphStore, "named_facts", lambda self: [])  # no LLM call is reached
    with pytest.raises(InputDataError, match="no question survived"):
        generate_testset(graph_config, None, out=tmp_path / "x.jsonl", n=2, progress=False)
    assert not (tmp_path / "x.jsonl").exists()


@needs_xllamacpp
def test_correctness_judge_prefers_the_right_answer(default_reader):
    def score(answer):
        return p_yes(default_reader, judge_prompt(CRITERIA["correctness"], "Where was Edith Crane born?", answer, [], ["Norwich"]))

    assert score("Norwich") > 0.5 > score("York")


def test_a_set_over_the_built_corpus_is_evaluated_on_the_build_as_it_is(graph_config, tmp_path):
    from enrich_rag.config import config_from_dict
    from enrich_rag.eval.prepare import prepare_eval, questions_path

    questions = write_jsonl(
        tmp_path / "synthetic.jsonl",
        [{"id": "q1", "question": "Where was Edith Crane born?", "answers": ["Norwich"], "gold_doc_ids": ["crane"]}],
    )
    ev = config_from_dict({"eval": {"questions": str(questions), "corpus": "built", "sample": 0}}).with_root(tmp_path).eval
    assert ev.over_built_corpus and ev.corpus == "built"  # a keyword, not resolved as a path
    source = Path(graph_config.corpus.source).read_bytes()
    assert prepare_eval(graph_config, ev) == {"questions": 1, "passages": 0}
    assert Path(graph_config.corpus.source).read_bytes() == source and not questions_path(graph_config).exists()
