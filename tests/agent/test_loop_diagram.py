"""The README's diagram is drawn from the loop's own list of stages (`agent/loop.py` `STAGES`); every
answer in the suite is checked against its arrows (tests/conftest.py). Here: the list covers every step
kind, and the check it makes can fail."""

from __future__ import annotations

from enrich_rag.agent.loop import STAGES, follows_stages
from enrich_rag.agent.trace import StepKind


def test_every_step_kind_the_loop_records_is_drawn_and_every_arrow_lands_on_a_stage():
    drawn = set().union(*(stage.kinds for stage in STAGES))
    assert set(StepKind) <= drawn
    names = {stage.name for stage in STAGES}
    assert all(then in names for stage in STAGES for then in stage.then)


def test_a_trace_off_the_drawn_arrows_is_caught():
    first_read = ["AnalyzeQuery", "GraphRank", "EnrichContext", "CheckSufficiency", "AnalyzeDecide"]
    assert follows_stages(first_read)
    assert follows_stages([*first_read, "Plan", "GraphRank", "EnrichContext", "CheckSufficiency", "Hop", "Confidence"])
    assert not follows_stages(["AnalyzeQuery", "Compare", "Plan"])  # no arrow back from Compare to Plan
    assert not follows_stages(["GraphRank"])  # every question starts with AnalyzeQuery
    assert not follows_stages([*first_read, "NewStep"])  # a step the diagram does not draw
