"""The peers benchmark's corpus (benchmarks/peers/sets.py), without the peers installed: what
LightRAG is handed must be the questions' own paragraphs, each once."""

from benchmarks.peers.sets import documents, paragraphs
from enrich_rag.eval.datasets import QAItem


def test_each_question_is_one_document_of_its_titled_paragraphs_each_paragraph_once():
    first = QAItem("q1", "Who?", ("A",), contexts=(("Nolan", "Nolan directed Inception."), ("Paris", "Paris is in France.")))
    second = QAItem("q2", "Where?", ("B",), contexts=(("Paris", "Paris is in France."), ("Rome", "Rome is in Italy.")))
    alone = QAItem("q3", "Again?", ("C",), contexts=(("Nolan", "Nolan directed Inception."),))
    assert documents([first, second, alone]) == [
        ("q1", "Nolan\nNolan directed Inception.\n\nParis\nParis is in France."),
        ("q2", "Rome\nRome is in Italy."),
    ]


def test_each_paragraph_is_given_once_with_the_question_that_brought_it():
    first = QAItem("q1", "Who?", ("A",), contexts=(("Nolan", "Nolan directed Inception."), ("Paris", "Paris is in France.")))
    second = QAItem("q2", "Where?", ("B",), contexts=(("Paris", "Paris is in France."), ("Rome", "Rome is in Italy.")))
    assert paragraphs([first, second]) == [
        ("q1", "Nolan", "Nolan directed Inception."),
        ("q1", "Paris", "Paris is in France."),
        ("q2", "Rome", "Rome is in Italy."),
    ]
