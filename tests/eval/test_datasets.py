"""Question loaders: the bundled normalised files and each benchmark's original format (files made here)."""

import json

import pytest

from enrich_rag.config import load_config
from enrich_rag.errors import InputDataError
from enrich_rag.eval.datasets import load_questions, pooled_corpus, sample
from enrich_rag.eval.metrics import precision_at_k, recall_at_k
from enrich_rag.ingest.documents import stable_doc_id
from tests.conftest import PROJECT_ROOT, write_jsonl


def test_recall_and_precision_at_k_on_a_hand_made_case():
    retrieved, gold = ["a", "x", "b", "y", "z"], {"a", "b", "c"}
    assert recall_at_k(retrieved, gold, 2) == pytest.approx(1 / 3)
    assert recall_at_k(retrieved, gold, 5) == pytest.approx(2 / 3)
    assert precision_at_k(retrieved, gold, 2) == pytest.approx(1 / 2)
    assert precision_at_k(retrieved, gold, 5) == pytest.approx(2 / 5)
    assert precision_at_k(["a", "b"], gold, 5) == 1.0  # a fixed-budget method is judged on what it returned
    assert precision_at_k([], gold, 5) == 0.0 and recall_at_k([], gold, 5) == 0.0


@pytest.mark.parametrize("name, size", [("hotpotqa_distractor", 300), ("2wikimultihopqa", 200), ("musique", 100), ("nq_open", 500)])
def test_bundled_samples_load_with_gold_passages(name, size):
    items = load_questions(PROJECT_ROOT / f"data/benchmarks/{name}/dev.jsonl", "normalized")
    assert len(items) == size
    assert all(item.answers and item.gold_docs for item in items)


def test_musique_duplicate_titles_keep_distinct_gold_passages():
    items = load_questions(PROJECT_ROOT / "data/benchmarks/musique/dev.jsonl", "normalized")
    pool = pooled_corpus(items)
    ids = {d["id"] for d in pool}
    assert all(set(item.gold_docs) <= ids for item in items)
    titles = [d["title"] for d in pool]
    assert len(titles) > len(set(titles))  # same title, different text: both kept


def test_original_formats(tmp_path):
    context = [["Inception", ["Inception is a film. ", "Nolan directed it."]], ["London", ["London is a city."]]]
    (tmp_path / "hotpot.json").write_text(
        json.dumps(
            [
                {
                    "_id": "h1",
                    "question": "Who directed Inception?",
                    "answer": "Nolan",
                    "type": "bridge",
                    "supporting_facts": [["Inception", 1]],
                    "context": context,
                }
            ]
        )
    )
    hotpot = load_questions(tmp_path / "hotpot.json", "hotpotqa")[0]
    assert hotpot.gold_docs == (stable_doc_id("Inception", "Inception is a film. Nolan directed it."),)
    assert load_questions(tmp_path / "hotpot.json", "2wiki")[0].answers == ("Nolan",)

    write_jsonl(
        tmp_path / "musique.jsonl",
        [
            {
                "id": "2hop__1_2",
                "question": "Q?",
                "answer": "A",
                "answer_aliases": ["Ay"],
                "paragraphs": [
                    {"idx": 0, "title": "T", "paragraph_text": "one", "is_supporting": False},
                    {"idx": 1, "title": "T", "paragraph_text": "two", "is_supporting": True},
                ],
            }
        ],
    )
    musique = load_questions(tmp_path / "musique.jsonl", "musique")[0]
    assert musique.answers == ("A", "Ay") and musique.type == "2hop" and musique.gold_docs == (stable_doc_id("T", "two"),)

    write_jsonl(tmp_path / "nq.jsonl", [{"question": "who sang x", "answer": ["Y", "Z"]}])
    assert load_questions(tmp_path / "nq.jsonl", "nq")[0].answers == ("Y", "Z")
    (tmp_path / "dpr.json").write_text(
        json.dumps([{"question": "q", "answers": ["a"], "positive_ctxs": [{"passage_id": "17", "title": "t", "text": "x"}]}])
    )
    assert load_questions(tmp_path / "dpr.json", "nq")[0].gold_docs == ("17",)

    (tmp_path / "trivia.json").write_text(
        json.dumps({"Data": [{"QuestionId": "t1", "Question": "Which planet?", "Answer": {"Value": "Mars", "Aliases": ["Red Planet"]}}]})
    )
    trivia = load_questions(tmp_path / "trivia.json", "triviaqa")[0]
    assert trivia.id == "t1" and trivia.answers == ("Mars", "Red Planet") and not trivia.has_gold
    write_jsonl(tmp_path / "flashrag.jsonl", [{"id": "f1", "question": "Which planet?", "golden_answers": ["Mars"]}])
    assert load_questions(tmp_path / "flashrag.jsonl", "triviaqa")[0].answers == ("Mars",)


def test_bad_question_files_fail_with_one_line(tmp_path):
    with pytest.raises(InputDataError, match="question file not found: .*missing.jsonl"):
        load_questions(tmp_path / "missing.jsonl", "normalized")
    write_jsonl(tmp_path / "bad.jsonl", [{"id": "1", "question": "", "answers": ["a"]}])
    with pytest.raises(InputDataError, match=r"bad.jsonl:1: question is missing or empty"):
        load_questions(tmp_path / "bad.jsonl", "normalized")
    (tmp_path / "broken.jsonl").write_text('{"question": "q", "answers": ["a"]}\n{"question": \n')
    with pytest.raises(InputDataError, match=r"broken.jsonl:2: invalid JSON"):
        load_questions(tmp_path / "broken.jsonl", "nq")


def test_a_config_whose_question_file_is_missing_names_it(tmp_path):
    """No TriviaQA sample with passages is bundled: a user's overlay points at their own files, and a
    wrong path is one line naming it."""
    from enrich_rag.eval.prepare import sampled_questions

    overlay = tmp_path / "triviaqa.yaml"
    overlay.write_text(f"eval:\n  dataset: triviaqa\n  questions: {tmp_path}/trivia/dev.json\n  format: triviaqa\n")
    ev = load_config(PROJECT_ROOT / "params.yaml", overlay).eval
    assert ev.format == "triviaqa"
    with pytest.raises(InputDataError, match="question file not found: .*trivia/dev.json"):
        sampled_questions(ev)


def test_sample_is_seeded_and_keeps_file_order():
    items = load_questions(PROJECT_ROOT / "data/benchmarks/hotpotqa_distractor/dev.jsonl", "normalized")
    first, again, other = sample(items, 20, 0), sample(items, 20, 0), sample(items, 20, 1)
    assert [i.id for i in first] == [i.id for i in again] != [i.id for i in other]
    order = [i.id for i in items]
    assert [order.index(i.id) for i in first] == sorted(order.index(i.id) for i in first)
