"""IRCoT interleaves a reasoning sentence with a retrieval: each sentence is the next query, and "answer
is" ends it. The reader is scripted (the sentences are the point, not a model's wording); the corpus
index and passage store are the real ones of the small build."""

from enrich_rag.api import EnrichRAG
from enrich_rag.eval.ircot import MAX_STEPS, first_sentence
from enrich_rag.eval.methods import CountingLLM, ircot_method
from tests.scripted_llm import ScriptedLLM

QUESTION = "Where was the director of Inception born?"


def test_each_sentence_retrieves_and_the_answer_ends_the_chain(built_small):
    reader = ScriptedLLM(
        [("Inception was directed by Christopher Nolan. More text.", 2.0), ("Nolan was born in London. So the answer is: London.", 1.5)]
    )
    with EnrichRAG(built_small, llm=reader, reconcile=False) as session:
        prediction = ircot_method(session.resources, CountingLLM(reader), QUESTION)
    assert prediction.answer == "London"
    assert prediction.trace["thoughts"] == [
        "Inception was directed by Christopher Nolan.",
        "Nolan was born in London. So the answer is: London.",
    ]
    assert "nolan" in prediction.docs  # the first sentence's own retrieval found the director's page
    assert "Question: Where was the director of Inception born?" in reader.prompts[1] and "Christopher Nolan." in reader.prompts[1]


def test_without_an_answer_the_reader_reads_what_was_retrieved(built_small):
    reader = ScriptedLLM([("Inception is a film.", 2.0)] * MAX_STEPS + [("London", 1.2)])
    with EnrichRAG(built_small, llm=reader, reconcile=False) as session:
        prediction = ircot_method(session.resources, CountingLLM(reader), QUESTION)
    assert len(prediction.trace["thoughts"]) == MAX_STEPS and prediction.answer == "London"  # the reader step's answer


def test_a_sentence_is_cut_at_its_end_unless_it_gives_the_answer():
    assert first_sentence("Nolan directed it. He was born in London.") == "Nolan directed it."
    assert first_sentence("He was born in London. So the answer is: London.") == "He was born in London. So the answer is: London."
