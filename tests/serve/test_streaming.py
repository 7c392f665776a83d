"""Streaming: a question's steps as they finish, then the whole answer; through
`EnrichRAG.ask(stream=True)`, the server's server-sent events, the CLI, and closing a stream mid-way.

The reader is scripted where what a model says is not the point (the order and timing of events is);
the graph, indexes, server and HTTP are real."""

from __future__ import annotations

import json
import threading
import time

import pytest
from fastapi.testclient import TestClient

from enrich_rag.agent.stream import ANSWER, STEP, streamed
from enrich_rag.agent.trace import QueryStopped, Trace
from enrich_rag.api import EnrichRAG
from enrich_rag.serve.app import create_app
from tests.scripted_llm import ScriptedLLM

LOCAL = "http://127.0.0.1:8000"
QUESTION = "Who directed Inception?"


def _sse(response) -> list[dict]:
    return [json.loads(line[len("data: ") :]) for line in response.iter_lines() if line.startswith("data: ")]


def _check_order(events: list[dict]) -> dict:
    kinds = [e["event"] for e in events]
    assert kinds == [STEP] * (len(kinds) - 1) + [ANSWER]  # each step as it finished, then the answer once
    answer = events[-1]["answer"]
    assert [e["tool"] for e in events if e["event"] == STEP] == [s["tool"] for s in answer["trace"]["steps"]]
    return answer


def test_ask_streams_each_step_then_the_answer(gap_config, spacy_extractor):
    rag = EnrichRAG(gap_config, llm=ScriptedLLM([("Christopher Nolan", 1.1)]))
    try:
        answer = _check_order(list(rag.ask(QUESTION, enrich="never", stream=True)))
    finally:
        rag.close()
    assert answer["answer"] == "Christopher Nolan" and answer["citations"]
    assert answer["quote"]["text"] == "Christopher Nolan directed Inception."  # the line that states it, in the stream's answer
    assert {"AnalyzeQuery", "GraphRank", "EnrichContext", "CheckSufficiency", "AnalyzeDecide"} <= {
        s["tool"] for s in answer["trace"]["steps"]
    }


def test_a_bad_question_fails_before_the_stream_starts(gap_config):
    rag = EnrichRAG(gap_config, llm=ScriptedLLM([("x", 1.1)]))
    try:
        with pytest.raises(Exception, match="binary data"):
            rag.ask("a\x00b", stream=True)
    finally:
        rag.close()


def test_closing_the_stream_stops_the_question_before_its_next_tool():
    """Real Trace and stream machinery; the tools are short sleeps so the stop can be seen between them."""
    ran: list[str] = []
    finished = threading.Event()

    def run(on_step, should_stop):
        trace = Trace("q", should_stop=should_stop, on_step=on_step)
        try:
            for i in range(20):
                with trace.step(f"Tool{i}"):
                    time.sleep(0.05)
                ran.append(f"Tool{i}")
        finally:
            finished.set()
        return {"answer": "never"}

    events = streamed(run)
    assert next(events)["tool"] == "Tool0"
    events.close()
    assert finished.wait(5)
    assert len(ran) <= 3  # the tool running when the stream closed finishes; none after it starts


def test_an_error_in_the_question_is_raised_to_the_reader_of_the_stream_and_its_step_is_not_shown_done():
    def run(on_step, should_stop):
        trace = Trace("q", on_step=on_step)
        with trace.step("AnalyzeQuery"):
            pass
        with trace.step("Plan"):
            raise QueryStopped("llm.backend 'llamacpp' needs xllamacpp")
        return {"answer": "never"}

    seen = []
    with pytest.raises(QueryStopped, match="needs xllamacpp"):
        for event in streamed(run):
            seen.append(event["tool"])
    assert seen == ["AnalyzeQuery"]


@pytest.fixture
def served(gap_config, spacy_extractor):
    session = EnrichRAG(gap_config, llm=ScriptedLLM([("Christopher Nolan", 1.1)]), extractor=spacy_extractor)
    with TestClient(create_app(gap_config, session), base_url=LOCAL) as client:
        yield client
    session.close()


def test_the_server_streams_server_sent_events_with_the_json_reply_last(served):
    with served.stream("POST", "/api/query", json={"question": QUESTION, "allow_enrich": False, "stream": True}) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        events = _sse(response)
    assert events[0] == {"event": "admitted", "time_limit_s": 60.0, "expected_wait_s": 0.0}  # at once, before any step
    answer = _check_order(events[1:])
    assert answer["answer"] == "Christopher Nolan" and answer["read_only"] is True
    assert set(answer["timing"]) == {"waited_s", "ran_s"} and answer["conversation_id"]
    assert all(isinstance(e["summary"], str) and e["seconds"] >= 0 for e in events if e["event"] == STEP)


def test_a_streamed_question_near_its_time_limit_ends_with_its_best_read(gap_config, embedded_llm, spacy_extractor):
    import dataclasses

    serve = dataclasses.replace(gap_config.serve, query_timeout_s=30.0, answer_margin_s=30.0, expected_question_s=0.1)
    config = dataclasses.replace(gap_config, serve=serve)
    session = EnrichRAG(config, llm=embedded_llm, extractor=spacy_extractor)
    with TestClient(create_app(config, session), base_url=LOCAL) as client:
        with client.stream("POST", "/api/query", json={"question": QUESTION, "allow_enrich": False, "stream": True}) as response:
            events = _sse(response)
        assert events[-1]["event"] == "answer" and events[-1]["answer"]["spent"] == "the time limit is near"
        client.app.state.admission.submit(lambda ticket: None, 60).future.result(timeout=20)  # the worker is free again
    session.close()


def test_the_cli_shows_each_step_and_streams_the_answer(gap_config, tmp_path):
    """`enrich-rag query --local` on a built project: a line per step on stderr, the answer on stdout."""
    import yaml
    from typer.testing import CliRunner

    from enrich_rag.cli.main import app

    params = tmp_path / "cli-params.yaml"
    params.write_text(yaml.safe_dump({"paths": dict(gap_config.paths.__dict__), "llm": {"backend": "embedded"}}))
    result = CliRunner().invoke(app, ["query", QUESTION, "--params", str(params), "--local", "--no-enrich"])
    assert result.exit_code == 0, result.output
    assert "✓ AnalyzeQuery" in result.stderr and "✓ CheckSufficiency" in result.stderr
    assert "Nolan" in result.stdout.splitlines()[0]  # the answer first, then the line that states it, then its evidence
    assert "stated in inception:" in result.stdout and "Nolan directed Inception." in result.stdout
