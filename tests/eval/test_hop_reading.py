"""The hop-at-a-time reading of python -m benchmarks hop_reading: which questions are taken apart and how, and when the
chained answer replaces the reader's own."""

import pytest

from benchmarks.hop_reading import follow, parse_chain
from tests.scripted_llm import ScriptedLLM


@pytest.mark.parametrize(
    "question, first, second",
    [
        ("Where did the director of film Passport To Rio die?", "Who is the director of film Passport To Rio?", "Where did {x} die?"),
        ("When was Hector Macpherson Jr.'s father born?", "Who is the father of Hector Macpherson Jr.?", "When was {x} born?"),
        (
            "What is the place of birth of Archduke Joseph Karl Of Austria's mother?",
            "Who is the mother of Archduke Joseph Karl Of Austria?",
            "What is the place of birth of {x}?",
        ),
        # the innermost reference first: of a possessive, of "of" forms the last
        ("Who is the father of Empress Wang's husband?", "Who is the husband of Empress Wang?", "Who is the father of {x}?"),
        (
            "Who is the spouse of the director of film The Imp (1919 Film)?",
            "Who is the director of film The Imp (1919 Film)?",
            "Who is the spouse of {x}?",
        ),
        # two-hop kinship words are spelled out
        (
            "Who is the paternal grandfather of Louis Iii, Count Of Blois?",
            "Who is the father of Louis Iii, Count Of Blois?",
            "Who is the father of {x}?",
        ),
        ("Who is Queen Inseong's mother-in-law?", "Who is the spouse of Queen Inseong?", "Who is {x}'s mother?"),
        # the second hop's verb ends the name; a capitalised word inside a title does not
        ("Which country the director of film La Yuma is from?", "Who is the director of film La Yuma?", "Which country {x} is from?"),
        (
            "When is the director of film Udayananu Tharam 's birthday?",
            "Who is the director of film Udayananu Tharam?",
            "When is {x}'s birthday?",
        ),
        (
            "What is the place of birth of the director of film Alien From L.A.?",
            "Who is the director of film Alien From L.A.?",
            "What is the place of birth of {x}?",
        ),
    ],
)
def test_bridge_questions_become_two_hops(question, first, second):
    chain = parse_chain(question)
    assert chain is not None and (chain.first, chain.second) == (first, second)


@pytest.mark.parametrize(
    "question",
    [
        "Who is the husband of Princess Elene Of Georgia?",  # one hop
        "Who is the mother of Olaf (Ii) Haraldsen?",
        "Who is the grandchild of Stefan Zamoyski?",  # not a named relation chain
        "Jacques Coghen is a direct ancestor to the spouse of which Belgian Queen?",  # no name after "of"
        "Which interpretation of the work of the writer of The Canon of Medicine was taught more in Islamic schools?",  # a clause
        "who plays the mother of howard on big bang theory",
        "Who was born first, Carla Mendes or Alan Brook?",
    ],
)
def test_other_questions_are_left_to_the_reader(question):
    assert parse_chain(question) is None


CONTEXT = [
    "Passport to Rio: Passport to Rio is a 1948 Argentine crime film, directed by Daniel Tinayre.",
    "Daniel Tinayre: Daniel Tinayre (1910 - 1994) was a French-born Argentine film director. He died in Buenos Aires.",
]
CHAIN = parse_chain("Where did the director of film Passport To Rio die?")


def test_the_second_hop_asks_about_the_first_hops_answer_over_the_same_context():
    """Scripted replies: which names a real model reads cannot be set on demand (the real reads are
    measured by the script over the dev questions' gold passages)."""
    llm = ScriptedLLM([("Daniel Tinayre.", 1.1), ("Buenos Aires", 1.2)])
    chained = follow(llm, CHAIN, CONTEXT, max_new_tokens=16)
    assert chained.answer == "Buenos Aires"
    assert list(chained.asked) == ["Who is the director of film Passport To Rio?", "Where did Daniel Tinayre die?"]
    assert all("Daniel Tinayre (1910 - 1994)" in prompt for prompt in llm.prompts)


def test_a_first_hop_answer_the_context_never_writes_leaves_the_readers_own_answer():
    llm = ScriptedLLM([("Luis Saslavsky", 1.1)])  # a name the passages do not hold: made up, not read
    chained = follow(llm, CHAIN, CONTEXT, max_new_tokens=16)
    assert chained.answer is None and list(chained.asked) == ["Who is the director of film Passport To Rio?"]
