"""The OpenAI-compatible endpoint, driven by the official `openai` client over real HTTP (uvicorn).

The reader is scripted so that what is checked is the dialect (models, completions, chunks, history,
errors); the graph, indexes and server are real. The real reader answers through the same
`/api/query` path in tests/serve/test_api.py."""

from __future__ import annotations

import pytest

openai = pytest.importorskip("openai")

from enrich_rag.api import EnrichRAG  # noqa: E402
from enrich_rag.serve.app import create_app  # noqa: E402
from tests.scripted_llm import ScriptedLLM  # noqa: E402
from tests.serve.conftest import serving  # noqa: E402


@pytest.fixture
def chat(gap_config, spacy_extractor):
    reader = ScriptedLLM([("Christopher Nolan", 1.1)])
    session = EnrichRAG(gap_config, llm=reader, extractor=spacy_extractor)
    app = create_app(gap_config, session)
    with serving(app) as url:
        token = app.state.token_path.read_text().strip()
        yield openai.OpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0), reader, url
    session.close()


def test_models_lists_the_one_model(chat):
    client, _, _ = chat
    assert [m.id for m in client.models.list()] == ["enrich-rag"]


def test_a_completion_is_the_answer_with_the_line_that_states_it_and_its_sources(chat):
    client, _, _ = chat
    reply = client.chat.completions.create(model="enrich-rag", messages=[{"role": "user", "content": "Who directed Inception?"}])
    content = reply.choices[0].message.content
    assert reply.choices[0].finish_reason == "stop" and reply.object == "chat.completion"
    assert content.startswith("Christopher Nolan\n\n> Christopher Nolan directed Inception. (inception)\n\nSources:\n[1] ")
    assert "inception::" in content
    extra = reply.model_extra["enrich_rag"]
    assert extra["answer"] == "Christopher Nolan" and extra["citations"] and extra["quote"]["doc_id"] == "inception"


def test_a_streamed_completion_sends_steps_as_reasoning_then_the_answer(chat):
    client, _, _ = chat
    stream = client.chat.completions.create(
        model="enrich-rag", messages=[{"role": "user", "content": "Who directed Inception?"}], stream=True
    )
    chunks = list(stream)
    reasoning = [c.choices[0].delta.model_extra.get("reasoning_content") for c in chunks]
    content = "".join(c.choices[0].delta.content or "" for c in chunks)
    first_content = next(i for i, c in enumerate(chunks) if c.choices[0].delta.content)
    assert any(r and r.startswith("AnalyzeQuery") for r in reasoning[:first_content])  # steps come before the answer
    assert content.startswith("Christopher Nolan\n\n> Christopher Nolan directed Inception. (inception)\n\nSources:\n[1] ")
    assert chunks[-1].choices[0].finish_reason == "stop" and len({c.id for c in chunks}) == 1


def test_the_history_resolves_a_follow_up(chat):
    client, reader, _ = chat
    first = client.chat.completions.create(model="enrich-rag", messages=[{"role": "user", "content": "Who directed Inception?"}])
    history = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Who directed Inception?"},
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "and where was he born?"},
    ]
    follow = client.chat.completions.create(model="enrich-rag", messages=history)
    assert follow.model_extra["enrich_rag"]["resolved_question"] == "Where was Christopher Nolan born?"


def test_an_unknown_model_and_a_missing_question_are_one_line_errors(chat):
    client, _, _ = chat
    with pytest.raises(openai.NotFoundError, match="GET /v1/models lists 'enrich-rag'"):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Who?"}])
    with pytest.raises(openai.BadRequestError, match="the last message must be the user's question"):
        client.chat.completions.create(model="enrich-rag", messages=[{"role": "assistant", "content": "Hello"}])


def test_without_the_key_a_question_only_reads(gap_config, spacy_extractor):
    """The reader stays unsure (perplexity far over the threshold), so a question that may write enriches:
    with the key it does, without it the same question reads only and writes nothing."""
    rag = EnrichRAG(gap_config, llm=ScriptedLLM([("Paris", 50.0)]), extractor=spacy_extractor)
    app = create_app(gap_config, rag)
    ask = {"model": "enrich-rag", "messages": [{"role": "user", "content": "Where was the director of Inception born?"}]}
    try:
        with serving(app) as url:
            token = app.state.token_path.read_text().strip()
            anonymous = openai.OpenAI(base_url=f"{url}/v1", api_key="not-the-token", max_retries=0)
            read = anonymous.chat.completions.create(**ask).model_extra["enrich_rag"]
            assert read["read_only"] is True and read["trace"]["partitions_written"] == []
            assert "EnrichGraph" not in [s["tool"] for s in read["trace"]["steps"]]
            assert [p["partition"] for p in rag.graph.partitions()] == ["seed"]

            keyed = openai.OpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0)
            wrote = keyed.chat.completions.create(**ask).model_extra["enrich_rag"]
            assert wrote["read_only"] is False and "QueueEnrichment" in [s["tool"] for s in wrote["trace"]["steps"]]
            assert wrote["queued"] and [j.id for j in rag.jobs()] == wrote["queued"]
    finally:
        rag.close()
