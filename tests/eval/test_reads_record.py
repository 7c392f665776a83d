"""The prediction row keeps every hypothetical answer the loop read, so keep rules can be compared offline."""

import json
import math

from enrich_rag.agent.enrich_graph import EnrichResult
from enrich_rag.agent.trace import Enriched, Read, Step, StepKind, Trace


def test_each_read_is_recorded_with_its_round_and_perplexity():
    trace = Trace("Where was the director of Inception born?")
    trace.steps = [
        Step(StepKind.CHECK_SUFFICIENCY, {}, Read("Paris", 2.5)),
        Step(StepKind.CHECK_SUFFICIENCY, {}, Read("Tasmania", math.inf)),  # a copied worked example (recorded as null)
        Step(StepKind.ENRICH_GRAPH, {}, Enriched(EnrichResult("Inception director", "llm", partition="enrich-1"))),
        Step(StepKind.CHECK_SUFFICIENCY, {}, Read("London", 1.8)),
        Step(StepKind.CHECK_SUFFICIENCY, {}, Read("Paris", 2.5, reused=True)),
    ]
    reads = trace.reads()
    assert reads == [
        {"round": 0, "answer": "Paris", "perplexity": 2.5},
        {"round": 0, "answer": "Tasmania", "perplexity": None},
        {"round": 1, "answer": "London", "perplexity": 1.8},
        {"round": 1, "answer": "Paris", "perplexity": 2.5, "reused": True},
    ]
    assert json.loads(json.dumps(reads, allow_nan=False)) == reads  # strict JSON: no Infinity


def test_a_trace_sent_over_the_wire_keeps_its_steps_outputs():
    trace = Trace("Q?", [Step(StepKind.CHECK_SUFFICIENCY, {"iteration": 0}, Read("London", 1.2, grounded=True))])
    back = Trace.from_dict(json.loads(trace.to_json()))
    assert back.to_dict() == trace.to_dict()
    assert back.steps[0].outputs == {"answer": "London", "perplexity": 1.2, "grounded": True}
    assert back.records(Read) == []  # a received step has no typed fields to read
