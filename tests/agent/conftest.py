"""The agent tests' small world: the five-document corpus built once a session (its seed graph leaves out
the Christopher Nolan page), and the loop over a writable copy of it with a scripted reader."""

from __future__ import annotations

import dataclasses

import pytest

from enrich_rag.resources import Resources
from enrich_rag.storage.workspace import writable_copy
from tests.conftest import make_agent
from tests.scripted_llm import ScriptedLLM

QUESTION = "Where was the director of Inception born?"
CHAIN = '{"hops": ["Who directed Inception?", "Where was #1 born?"]}'


@pytest.fixture(scope="session")
def world(gap_build):
    """The session's gap build (the seed graph leaves out the Christopher Nolan page), read only: the loop
    writes to a `writable_copy` of it."""
    from enrich_rag.config import load_config
    from tests.conftest import PROJECT_ROOT, small_config_at

    base = load_config(PROJECT_ROOT / "params.yaml")
    built = small_config_at(gap_build)
    return dataclasses.replace(
        base,
        paths=built.paths,
        corpus=built.corpus,
        # the tree's loop (no search first read, plan first): what these tests take apart; loop_agent and
        # tests/agent/test_first_read.py set the first read where they test it
        agent=dataclasses.replace(base.agent, expansion="template", enrich_chunks=2, ppl_threshold=1.5, first_read=0, plan_when="always"),
        extraction=dataclasses.replace(base.extraction, deep="spacy"),
    )  # enriched by `spacy_extractor`


def loop_agent(config, tmp_path, spacy_extractor, script, selection=None, **agent):
    """`selection`: the context strategy (`evidence.selection`), chosen once when the agent is built. The
    question is read as one (`hops` off) unless a test plans it: the script's first reply is then the plan.
    A whole read grows by the perplexity rule unless a test asks for `grow="unstated"`: most tests here
    script perplexities, and the default's stop (the first read that states its answer) is tested apart.
    Enrichment runs before the answer (`enrich_when="now"`, the design's loop) unless a test queues it, a
    planned question is planned before it is read (`plan_when="always"`) unless a test reads first, and
    nothing is learned (`learn`, tested apart in tests/agent/test_learned.py) unless a test asks. The tree
    reads first (`first_read=0`): the search's first read is tested apart."""
    copy = writable_copy(config, tmp_path / "copy")
    resources = Resources(copy, llm=ScriptedLLM(script), extractor=spacy_extractor)
    evidence = dataclasses.replace(copy.evidence, selection=selection or copy.evidence.selection)
    settings = {"hops": False, "plan_when": "always", "grow": "perplexity", "enrich_when": "now", "learn": False, "first_read": 0} | agent
    return make_agent(resources, dataclasses.replace(copy.agent, **settings), evidence), resources


def step_outputs(answer, tool):
    return [s.outputs for s in answer.trace.steps if s.kind == tool]
