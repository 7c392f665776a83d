"""Date comparisons: which questions are taken apart, and the pick made from the reader's two dates
(with the real embedded model reading them)."""

import pytest

from enrich_rag.llm.comparison import compare, first_year, parse_comparison


@pytest.mark.parametrize(
    "question, asked_of_a, earlier",
    [
        ("Who was born earlier, Jayme De Almeida or Elmina Shepard Taylor?", "When was Jayme De Almeida born?", True),
        ("Who died later, Steve Tesich or Elizabeth Jane Gardner?", "When did Steve Tesich die?", False),
        ("Which magazine came out first, Progetto Babele or Murray'S Magazine?", "When was Progetto Babele released?", True),
        ("Which one was established first, Windowswear or Compagnie Française Des Métaux?", "When was Windowswear founded?", True),
        ("Who is older, Mirko Höfflin or Carl Von Linde?", "When was Mirko Höfflin born?", True),
        ("Which is older, Harvard University or Yale University?", "When was Harvard University founded?", True),
        (
            "Which film has the director died later, Home, James (Film) or There'S One Born Every Minute?",
            "When did the director of Home, James (Film) die?",
            False,
        ),
        (
            'Which film whose director is younger, I Cannot Say "Farewell" or Tanjuska?',
            'When was the director of I Cannot Say "Farewell" born?',
            False,
        ),
        ("Who was born first out of Eric Tanenblatt and Craig L. Fuller?", "When was Eric Tanenblatt born?", True),
    ],
)
def test_date_comparisons_become_one_question_per_side(question, asked_of_a, earlier):
    comparison = parse_comparison(question)
    assert comparison is not None and comparison.ask(comparison.a) == asked_of_a and comparison.earlier is earlier


@pytest.mark.parametrize(
    "question",
    [
        "Are Stealing Harvard and Between Day And Night from the same country?",
        "Where was the director of Inception born?",
        "Which is longer, the Nile or the Amazon?",  # not a date
        "Who was born first, Tom Hardy or Tom Hardy?",
    ],
)
def test_other_questions_are_left_to_the_reader(question):
    assert parse_comparison(question) is None


def test_years_are_read_from_dates_written_any_way():
    assert [first_year(t) for t in ("12 May 1931", "1931-05-12", "in 2003.", "May", "page 12")] == [1931, 1931, 2003, None, None]


CONTEXT = [
    "Carla Mendes: Carla Mendes (born 3 June 1958) is a Brazilian singer.",
    "Alan Brook: Alan Brook (born 12 May 1931) is an English painter.",
]


@pytest.mark.parametrize(
    "question, expected",
    [("Who was born first, Carla Mendes or Alan Brook?", "Alan Brook"), ("Who is younger, Alan Brook or Carla Mendes?", "Carla Mendes")],
)
def test_the_side_is_picked_from_the_dates_the_reader_reads(embedded_llm, question, expected):
    compared = compare(embedded_llm, parse_comparison(question), CONTEXT, max_new_tokens=16)
    assert compared.answer == expected, compared.asked
    assert sorted(first_year(reply) for reply in compared.asked.values()) == [1931, 1958]


@pytest.mark.parametrize("replies", [("I do not know", "12 May 1931"), ("1931", "May 1931")])
def test_a_missing_or_equal_year_leaves_the_readers_own_answer(replies):
    """Scripted replies: which dates a real model reads cannot be set on demand (the pick itself is
    tested with the embedded model above)."""
    from tests.scripted_llm import ScriptedLLM

    llm = ScriptedLLM([(reply, 1.1) for reply in replies])
    compared = compare(llm, parse_comparison("Who died earlier, Carla Mendes or Alan Brook?"), CONTEXT, max_new_tokens=16)
    assert compared.answer is None and list(compared.asked) == ["When did Carla Mendes die?", "When did Alan Brook die?"]
    assert all("Carla Mendes: Carla Mendes (born 3 June 1958)" in prompt for prompt in llm.prompts)  # the same context
