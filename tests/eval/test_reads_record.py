"""The prediction row keeps every hypothetical answer the loop read, so keep rules can be compared offline."""

import json

from enrich_rag.agent.trace import Step, Trace


def test_each_read_is_recorded_with_its_round_and_perplexity():
    trace = Trace("Where was the director of Inception born?")
    trace.steps = [
        Step("CheckSufficiency", {}, {"answer": "Paris", "perplexity": 2.5}),
        Step("CheckSufficiency", {}, {"answer": "Tasmania", "perplexity": None}),  # a copied worked example (recorded as null)
        Step("EnrichGraph", {}, {"partition": "enrich-1"}),
        Step("CheckSufficiency", {}, {"answer": "London", "perplexity": 1.8}),
        Step("CheckSufficiency", {}, {"answer": "Paris", "perplexity": 2.5, "reused": True}),
    ]
    reads = trace.reads()
    assert reads == [
        {"round": 0, "answer": "Paris", "perplexity": 2.5},
        {"round": 0, "answer": "Tasmania", "perplexity": None},
        {"round": 1, "answer": "London", "perplexity": 1.8},
        {"round": 1, "answer": "Paris", "perplexity": 2.5, "reused": True},
    ]
    assert json.loads(json.dumps(reads, allow_nan=False)) == reads  # strict JSON: no Infinity
