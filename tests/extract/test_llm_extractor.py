"""Deep extraction by the reader model: replies held to a JSON schema, facts kept only where the chunk
writes them, named into the graph like every extractor's."""

import importlib.util

import pytest

from enrich_rag.extract.assemble import graph_tables
from enrich_rag.extract.llm_extractor import MAX_RELATION_CHARS, LLMExtractor, evidence_sentence, fact_schema, parse_facts
from enrich_rag.llm.prompts import fact_prompt
from enrich_rag.storage.passages import Passage
from tests.scripted_llm import ScriptedLLM

NOLAN = Passage(
    "nolan::c0", "nolan", "Christopher Nolan", "Christopher Nolan is a British-American film director. Nolan was born in London in 1970."
)


def test_a_reply_is_parsed_to_the_schema_or_gives_nothing():
    reply = '{"facts": [["Christopher Nolan", "born in", "London"], ["Nolan", ""], ["", "born in", "London"], {"subject": "Nolan"}]}'
    assert parse_facts(reply) == [{"subject": "Christopher Nolan", "relation": "born in", "object": "London"}]
    assert parse_facts("London") == [] and parse_facts('{"facts": "none"}') == [] and parse_facts('{"facts": [') == []


def test_facts_the_chunk_never_writes_are_dropped_and_the_rest_cite_their_sentence():
    assert evidence_sentence(NOLAN.text, "Nolan", "London") == "Nolan was born in London in 1970."
    assert evidence_sentence(NOLAN.text, "Steven Spielberg", "Ohio") is None
    assert evidence_sentence(NOLAN.text, "Nolan", "Starling Bridge") is None  # a subject alone is not enough
    llm = ScriptedLLM(
        [
            (
                '{"facts": [["Christopher Nolan", "born in", "London"], ["Steven Spielberg", "born in", "Ohio"]]}',
                1.0,
            )
        ]
    )
    extraction = LLMExtractor(llm, fact_prompt).extract([NOLAN])
    assert [(e.subject, e.relation, e.object, e.extractor) for e in extraction.edges] == [("Christopher Nolan", "born in", "London", "llm")]
    assert extraction.edges[0].evidence == "Nolan was born in London in 1970." and extraction.edges[0].chunk_id == NOLAN.id
    tables = graph_tables(extraction, titled=[NOLAN])  # the graph's own normalisation names the nodes
    assert {"Christopher Nolan", "London"} <= set(tables.nodes.column("name").to_pylist())


@pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None, reason="xllamacpp not installed")
def test_llama_cpp_replies_always_parse_under_the_schema(gemma_llamacpp):
    extractor = LLMExtractor(gemma_llamacpp, fact_prompt, max_new_tokens=160)
    chunks = [
        NOLAN,
        Passage(
            "inception::c0", "inception", "Inception", "Inception is a 2010 science fiction film. Christopher Nolan directed Inception."
        ),
    ]
    extraction = extractor.extract(chunks)
    assert extractor.replies == 2 and extractor.unparsed == 0  # a grammar, not hope: every reply is the schema's shape
    text = {c.id: f"{c.title}. {c.text}" for c in chunks}
    for edge in extraction.edges:  # whatever the small model proposes, what is kept is written in its chunk
        assert edge.extractor == "llm" and edge.evidence in text[edge.chunk_id]
        assert edge.object.casefold() in text[edge.chunk_id].casefold()
        assert len(edge.relation) <= MAX_RELATION_CHARS  # the grammar ends a relation that runs on


def test_facts_per_chunk_are_capped_in_the_schema_and_when_parsing():
    """The cap bounds decoding time on llama.cpp (the grammar) and what any other backend's reply gives."""
    assert fact_schema(2)["properties"]["facts"]["maxItems"] == 2
    reply = '{"facts": [["A", "r", "B"], ["A", "r", "C"], ["A", "r", "D"]]}'
    assert [f["object"] for f in parse_facts(reply, max_facts=2)] == ["B", "C"]
