"""The router the route study replays (benchmarks/route_questions.py; retired from the loop): from the
parse alone (real spaCy), which questions it would send to the planner."""

from benchmarks.route_questions import route
from enrich_rag.evidence.query_analysis import analyze_query


def _route(question, nlp):
    return route(analyze_query(question, nlp), nlp)


def test_a_question_with_no_cue_is_read_whole(nlp):
    assert _route("Who directed Inception?", nlp) == (False, "no cue")


def test_a_description_of_a_named_thing_goes_to_the_planner(nlp):
    assert _route("Where was the director of Inception born?", nlp) == (True, "description")


def test_a_comparison_goes_to_the_planner(nlp):
    assert _route("Who was born first, Christopher Nolan or Leonardo DiCaprio?", nlp) == (True, "comparison")
