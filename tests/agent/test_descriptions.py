"""The bridge check's split on spaCy's real parse: which descriptions are asked on their own, and which
questions are kept whole. Questions of our own making, in the shapes a user's corpus has."""

import pytest

from enrich_rag.agent.plan import bridge_split

SPLIT = [
    # an of-phrase, with the clause that names nothing (a parse of "born" onto the noun) left out
    ("Where was the director of Inception born?", "the director of Inception", "Where was #1 born?"),
    # a possessive: its own "'s" stays beside the slot
    ("Who was Ada Lovelace's father's spouse?", "Ada Lovelace's father", "Who was #1's spouse?"),
    # a relative clause, and the innermost of two descriptions
    (
        "Who is the spouse of the director of the film directed by Steven Spielberg?",
        "the film directed by Steven Spielberg",
        "Who is the spouse of the director of #1?",
    ),
    ("When was the company that built the Eiffel Tower founded?", "the company that built the Eiffel Tower", "When was #1 founded?"),
]

KEPT = [
    "What is the capital of France?",  # nothing left to ask but the thing itself
    "What part of Scotland is Fife in?",  # the description holds what the question asks
    "Who is the mother-in-law of John Smith?",  # the span would cut a word
    "the vast interior rural area of australia is known as the",  # no question word: it asks for the thing described
    "Which city is the capital of Kenya called?",  # only its name is left to ask
    "Who directed Inception?",  # nothing described through a name
]


@pytest.mark.parametrize(("question", "description", "rest"), SPLIT)
def test_a_description_through_a_name_is_asked_on_its_own(nlp, question, description, rest):
    split = bridge_split(question, nlp)
    assert split is not None and (split.description, split.rest) == (description, rest)
    assert split.first == f"What is {description}?"


@pytest.mark.parametrize("question", KEPT)
def test_a_question_without_a_description_to_ask_is_kept_whole(nlp, question):
    assert bridge_split(question, nlp) is None
