"""Route before planning: from the parse alone (real spaCy), which questions get a Plan call."""

from enrich_rag.agent.route import PLAN, WHOLE, route
from enrich_rag.evidence.query_analysis import analyze_query


def _route(question, nlp):
    return route(analyze_query(question, nlp), nlp)


def test_a_question_with_no_cue_is_read_whole(nlp):
    decided = _route("Who directed Inception?", nlp)
    assert decided.decision == WHOLE and decided.reason == "no cue" and not decided.plans


def test_a_description_of_a_named_thing_goes_to_the_planner(nlp):
    decided = _route("Where was the director of Inception born?", nlp)
    assert decided.decision == PLAN and decided.reason == "description"
    assert decided.split is not None and "director of Inception" in decided.split.description


def test_a_comparison_goes_to_the_planner(nlp):
    decided = _route("Who was born first, Christopher Nolan or Leonardo DiCaprio?", nlp)
    assert decided.decision == PLAN and decided.reason == "comparison"
