"""Every endpoint through FastAPI's TestClient on the small built graph, with the real embedded LLM."""

import dataclasses
import time
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from enrich_rag.api import EnrichRAG
from enrich_rag.serve.app import create_app

LOCAL = "http://127.0.0.1:8000"  # the Host the server is bound to (TestClient's own "testserver" is refused)


def _authorised(client: TestClient) -> TestClient:
    token = client.app.state.token_path.read_text().strip()
    client.headers["Authorization"] = f"Bearer {token}"
    return client


def _served(config, llm, extractor):
    session = EnrichRAG(config, llm=llm, extractor=extractor)
    with TestClient(create_app(config, session), base_url=LOCAL) as client:
        yield _authorised(client)
    session.close()


@pytest.fixture
def client(gap_config, embedded_llm, spacy_extractor):
    """A client holding the write token."""
    yield from _served(gap_config, embedded_llm, spacy_extractor)


@pytest.fixture
def tree_client(gap_config, embedded_llm, spacy_extractor):
    """The same, its loop reading the tree first (`agent.first_read: 0`): here the search's first passage
    states the answers, and a read that states its answer is sure, so it would queue no enrichment."""
    config = dataclasses.replace(gap_config, agent=dataclasses.replace(gap_config.agent, first_read=0))
    yield from _served(config, embedded_llm, spacy_extractor)


def test_query_returns_answer_citations_trace_and_subgraph(client):
    response = client.post("/api/query", json={"question": "Who directed Inception?", "allow_enrich": False})
    assert response.status_code == 200, response.text
    data = response.json()
    assert "Nolan" in data["answer"]
    assert data["citations"] and data["citations"][0]["chunk_id"].startswith("inception::")
    assert {"AnalyzeQuery", "EnrichContext", "CheckSufficiency", "AnalyzeDecide"} <= {s["tool"] for s in data["trace"]["steps"]}
    nodes = {n["id"] for n in data["subgraph"]["nodes"]}
    assert nodes and all(e["src"] in nodes and e["dst"] in nodes for e in data["subgraph"]["edges"])
    chunk = client.get(f"/api/chunk/{data['citations'][0]['chunk_id']}").json()
    assert chunk["title"] == "Inception" and "Christopher Nolan directed Inception" in chunk["text"]

    follow = client.post(
        "/api/query", json={"question": "and where was he born?", "allow_enrich": False, "conversation_id": data["conversation_id"]}
    ).json()
    assert follow["conversation_id"] == data["conversation_id"]
    assert "Nolan" in follow["resolved_question"] and "born" in follow["resolved_question"]


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "question: Field required"),
        ({"question": ""}, "question: String should have at least 1 character"),
        ({"question": "x" * 2001}, "question: String should have at most 2000 characters"),
        ({"question": "Who?", "allow_enrich": "maybe"}, "allow_enrich: Input should be a valid boolean"),
        ({"question": "Who?", "temperature": 1}, "temperature: Extra inputs are not permitted"),
        ({"question": "a\x00b"}, "question contains binary data"),
    ],
)
def test_bad_queries_are_400_with_one_line(client, body, message):
    response = client.post("/api/query", json=body)
    assert response.status_code == 400
    assert message in response.json()["error"] and "\n" not in response.json()["error"]


def test_settings_are_an_overlay_checked_saved_and_shown(client, gap_config):
    from pathlib import Path

    before = client.get("/api/settings").json()
    assert before["overlay"] == {} and before["settings"]["k"] == gap_config.evidence.k
    updated = client.post("/api/settings", json={"k": 3, "allow_enrich": False}).json()
    assert updated["settings"]["k"] == 3 and updated["settings"]["allow_enrich"] is False
    assert updated["overlay"] == {"evidence": {"k": 3}, "agent": {"allow_enrich": False}}  # shown, never silent
    assert updated["settings"]["rerank"] == before["settings"]["rerank"]
    assert client.get("/api/settings").json() == updated
    saved = yaml.safe_load(Path(gap_config.paths.root, "web_settings.yaml").read_text())
    assert saved == {"evidence": {"k": 3}, "agent": {"allow_enrich": False}}  # the shape of params.yaml
    for body, message in [
        ({"k": 0}, "evidence.k must be >= 1 and <= 20, got 0"),
        ({"rerank": "magic"}, "evidence.rerank must be one of entity, none, llm"),
        ({"nope": 1}, "web setting 'nope' is not one the page may change"),
    ]:
        response = client.post("/api/settings", json=body)
        assert response.status_code == 400 and message in response.json()["error"]
    assert client.get("/api/settings").json() == updated  # a refused update changed nothing
    reset = client.delete("/api/settings").json()
    assert reset["overlay"] == {} and reset["settings"] == before["settings"]
    assert not Path(gap_config.paths.root, "web_settings.yaml").exists()


def test_settings_saved_by_one_worker_process_are_what_another_shows(client, gap_config, spacy_extractor):
    # `serve --processes N`: every worker is an app on the same data folder; a second app stands in for another process.
    session = EnrichRAG(gap_config, extractor=spacy_extractor)
    with _authorised(_client_with(gap_config, session)) as other:
        assert other.get("/api/settings").json()["overlay"] == {}
        client.post("/api/settings", json={"k": 4})
        assert other.get("/api/settings").json()["settings"]["k"] == 4
        other.delete("/api/settings")
        assert client.get("/api/settings").json()["overlay"] == {}
    session.close()


def test_graph_endpoints_and_rollback(tree_client):
    client = tree_client
    stats = client.get("/api/graph/stats").json()
    assert stats["nodes"] > 0 and [p["partition"] for p in stats["partitions"]] == ["seed"]
    partitions = client.get("/api/graph/partitions").json()
    assert partitions[0]["partition"] == "seed" and partitions[0]["dvc"] == "stage output"
    for body, message in [
        ({"partition": "seed"}, "seed partition is a build output"),
        ({"partition": "enrich-nope"}, "no partition 'enrich-nope'"),
        ({"partition": "../etc"}, "invalid partition id"),
        ({}, "partition: Field required"),
    ]:
        response = client.post("/api/graph/rollback", json=body)
        assert response.status_code == 400 and message in response.json()["error"]
    # A real enrichment (a threshold no answer meets forces one round), queued by the answer and run by the
    # server's worker once no question is in line; then its rollback through the API.
    client.post("/api/settings", json={"ppl_threshold": 1.0001, "max_enrich_rounds": 1})
    answer = client.post("/api/query", json={"question": "Where was Christopher Nolan born?", "allow_enrich": True}).json()
    assert answer["trace"]["partitions_written"] == [] and len(answer["queued"]) == 1
    assert "QueueEnrichment" in [s["tool"] for s in answer["trace"]["steps"]]
    deadline = time.monotonic() + 120
    while (jobs := client.get("/api/jobs").json())["counts"]["pending"] + jobs["counts"]["running"] and time.monotonic() < deadline:
        time.sleep(0.2)
    (job,) = [j for j in jobs["jobs"] if j["kind"] == "enrich"]  # (a grounded read also queues its learned facts)
    assert job["id"] == answer["queued"][0] and job["state"] == "done", job
    written = job["result"]["partition"]
    learned = [j["result"]["partition"] for j in jobs["jobs"] if j["kind"] == "learn" and j["result"].get("partition")]
    assert [p["partition"] for p in client.get("/api/graph/partitions").json()] == ["seed", *sorted([written, *learned])]
    done = client.post("/api/graph/rollback", json={"partition": written}).json()
    assert done["partition"] == written and done["index_rows_deleted"] > 0
    assert [p["partition"] for p in client.get("/api/graph/partitions").json()] == ["seed", *learned]


def test_openapi_schema_and_page(client):
    schema = client.get("/openapi.json").json()
    assert {"/api/query", "/api/settings", "/api/graph/stats", "/api/graph/partitions", "/api/graph/rollback"} <= set(schema["paths"])
    page = client.get("/")
    assert page.status_code == 200 and "/static/vendor/cytoscape.min.js" in page.text
    assert client.get("/static/vendor/cytoscape.min.js").status_code == 200


def _client_with(config, session, host="127.0.0.1", **serve):
    app = create_app(dataclasses.replace(config, serve=dataclasses.replace(config.serve, **serve)), session, host=host)
    return TestClient(app, base_url=LOCAL)


def test_a_body_over_the_limit_is_refused_unread(gap_config, spacy_extractor):
    session = EnrichRAG(gap_config, extractor=spacy_extractor)
    with _client_with(gap_config, session, max_body_bytes=4096) as client:
        big = b'{"question": "' + b"x" * 20_000_000 + b'"}'
        response = client.post("/api/query", content=big, headers={"content-type": "application/json"})
        assert response.status_code == 413 and "4,096-byte limit" in response.json()["error"]
        chunked = client.post(
            "/api/query", content=iter([b'{"question": "', b"y" * 8192, b'"}']), headers={"content-type": "application/json"}
        )
        assert chunked.status_code == 413  # no declared length: cut off once past the limit
        assert _authorised(client).post("/api/settings", json={"k": 2}).status_code == 200  # small bodies still pass


def test_a_question_near_its_time_limit_is_answered_with_its_best_read_not_a_504(gap_config, embedded_llm, spacy_extractor):
    """Past its time limit less `serve.answer_margin_s` a question starts no reader call: it answers with
    what it has read (nothing, here: the margin is the whole limit), flagged, and frees its worker."""
    session = EnrichRAG(gap_config, llm=embedded_llm, extractor=spacy_extractor)
    serve = {"query_timeout_s": 30.0, "answer_margin_s": 30.0, "workers": 1, "expected_question_s": 0.1}
    with _client_with(gap_config, session, **serve) as client:
        response = client.post("/api/query", json={"question": "Who directed Inception?", "allow_enrich": False})
        assert response.status_code == 200 and response.json()["spent"] == "the time limit is near"
        assert "CheckSufficiency" not in [s["tool"] for s in response.json()["trace"]["steps"]]
        assert set(response.json()["timing"]) == {"waited_s", "ran_s"}
        client.app.state.admission.submit(lambda ticket: None, 60).future.result(timeout=20)  # the worker is free


def test_page_settings_cannot_exceed_what_one_question_can_afford(client):
    response = client.post("/api/settings", json={"candidates": 200})
    assert response.status_code == 400 and "evidence.candidates must be <= 20 on the web page" in response.json()["error"]


def test_a_damaged_settings_file_is_one_line_at_start(gap_config, spacy_extractor):
    from pathlib import Path

    from enrich_rag.errors import ConfigError

    saved = Path(gap_config.paths.root, "web_settings.yaml")
    for text, message in [
        ("evidence: {k: [", "web_settings.yaml: not readable YAML"),
        ("evidence:\n  k: two\n", "evidence.k must be an integer, got 'two'"),
        ("evidence:\n  k: 0\n", "evidence.k must be >= 1"),
        ("agent:\n  k: 3\n", "agent.k is in the wrong section"),
        ("evidence:\n  damping: 0.3\n", "web setting 'damping' is not one the page may change"),
    ]:
        saved.write_text(text)
        with pytest.raises(ConfigError, match=message) as error:
            create_app(gap_config, EnrichRAG(gap_config, extractor=spacy_extractor))
        assert "\n" not in str(error.value) and "fix or delete the file" in str(error.value)


def test_writes_need_the_token_and_change_nothing_without_it(gap_config, embedded_llm, spacy_extractor):
    session = EnrichRAG(gap_config, llm=embedded_llm, extractor=spacy_extractor)
    with _client_with(gap_config, session) as client:
        token_file = client.app.state.token_path
        assert token_file.stat().st_mode & 0o777 == 0o600  # readable by the user alone
        for call in (
            lambda: client.post("/api/graph/rollback", json={"partition": "enrich-x"}),
            lambda: client.post("/api/settings", json={"k": 3}),
            lambda: client.delete("/api/settings"),
            lambda: client.post("/api/query", json={"question": "Where was Christopher Nolan born?", "allow_enrich": True}),
        ):
            response = call()
            assert response.status_code == 401 and "needs the write token" in response.json()["error"]
        assert client.get("/api/settings").json()["overlay"] == {}
        assert not any(Path(gap_config.paths.graph, "nodes").glob("partition=enrich-*"))
        # Reading needs no token on loopback, and never enriches without it.
        read = client.post("/api/query", json={"question": "Who directed Inception?"})
        assert read.status_code == 200 and read.json()["read_only"] is True
        assert "EnrichGraph" not in {s["tool"] for s in read.json()["trace"]["steps"]}
        client.headers["Authorization"] = "Bearer wrong"
        assert client.post("/api/settings", json={"k": 3}).status_code == 401
        assert _authorised(client).post("/api/settings", json={"k": 3}).status_code == 200


def test_a_foreign_host_is_refused_and_a_public_bind_needs_the_token_for_reads(gap_config, spacy_extractor):
    session = EnrichRAG(gap_config, extractor=spacy_extractor)
    with _client_with(gap_config, session) as client:
        assert client.get("/api/health").status_code == 200
        assert client.get("/api/health", headers={"host": "localhost:8000"}).status_code == 200
        rebound = client.get("/api/graph/stats", headers={"host": "attacker.example:8000"})
        assert rebound.status_code == 400 and "Host 'attacker.example' is not this server" in rebound.json()["error"]
    with _client_with(gap_config, session, host="0.0.0.0") as client:
        refused = client.get("/api/graph/stats")
        assert refused.status_code == 401 and "non-loopback" in refused.json()["error"]
        assert client.get("/").status_code == 200  # the page itself; it sends the token it was opened with
        assert _authorised(client).get("/api/graph/stats").status_code == 200


def test_a_saturated_line_is_refused_at_once_with_retry_after(gap_config, spacy_extractor):
    import threading
    import time

    session = EnrichRAG(gap_config, extractor=spacy_extractor)
    with _client_with(gap_config, session, workers=1, queue_size=1, expected_question_s=5, query_timeout_s=60) as client:
        admission, release = client.app.state.admission, threading.Event()
        running = admission.submit(lambda ticket: release.wait(30), 60)  # the reader is busy ...
        while not admission.health()["running"]:
            time.sleep(0.01)
        waiting = admission.submit(lambda ticket: None, 60)  # ... and the line is full
        for _ in range(5):
            response = client.post("/api/query", json={"question": "Who directed Inception?"})
            assert response.status_code == 503
        # Refused without waiting for a place: the busy job holds the reader until released, so a
        # refusal that had waited for room could not have come back before it finished.
        assert not running.future.done() and not waiting.future.done()
        assert int(response.headers["Retry-After"]) >= 1 and "questions are waiting" in response.json()["error"]
        health = client.get("/api/health").json()
        assert health["queued"] == 1 and health["running"] == 1 and health["refused"] == 5 and health["rss_mb"] > 0
        release.set()
        running.future.result(timeout=10), waiting.future.result(timeout=10)


def test_the_servers_reader_serves_questions_first(client):
    from enrich_rag.llm.priority import QuestionsFirst

    reader = client.app.state.resources.llm
    assert isinstance(reader, QuestionsFirst) and reader.idle == client.app.state.admission.idle
    answered = client.post("/api/query", json={"question": "Who directed Inception?", "allow_enrich": False})
    assert answered.status_code == 200 and answered.json()["answer"]  # a question's calls go straight through


def test_a_question_its_wait_left_too_little_time_gets_503_with_retry_after_not_504(gap_config, spacy_extractor):
    import threading
    from concurrent.futures import ThreadPoolExecutor

    session = EnrichRAG(gap_config, extractor=spacy_extractor)
    bounded = dataclasses.replace(gap_config, agent=dataclasses.replace(gap_config.agent, max_answer_s=0.5))  # planned: 1 s a question
    with _client_with(bounded, session, workers=1, expected_question_s=1, query_timeout_s=3, answer_margin_s=0.5) as client:
        admission, release = client.app.state.admission, threading.Event()
        admission.submit(lambda ticket: release.wait(30), 60)  # the reader is busy, longer than its bound
        while not admission.health()["running"]:
            time.sleep(0.01)
        with ThreadPoolExecutor(1) as pool:
            asked = pool.submit(client.post, "/api/query", json={"question": "Who directed Inception?", "allow_enrich": False})
            while not admission.health()["queued"]:  # admitted: at most 1 s left of the busy one + 1 s < 3 s
                time.sleep(0.01)
            time.sleep(2.3)  # then its wait overran the plan: under 1 s of its limit is left
            release.set()
            response = asked.result(timeout=30)
        assert response.status_code == 503 and int(response.headers["Retry-After"]) >= 1
        assert "of the limit is left" in response.json()["error"]
        assert client.get("/api/health").json()["refused_after_waiting"] == 1


def test_enrichment_starts_only_when_the_measured_round_fits_the_time_left(gap_config, embedded_llm, spacy_extractor):
    """A fixed reserve guessed for one corpus and reader let a newcomer's question start an enrichment
    that ran it past its limit (504 at 60.8 s): the server plans with the rounds it has timed."""
    # the tree's loop, which enriches an unsure read (a first read of the search that states its answer does not)
    waits = dataclasses.replace(
        gap_config, agent=dataclasses.replace(gap_config.agent, enrich_when="now", first_read=0, plan_when="always")
    )
    session = EnrichRAG(waits, llm=embedded_llm, extractor=spacy_extractor)
    with _client_with(waits, session, enrich_reserve_s=0, query_timeout_s=120) as client:
        client = _authorised(client)
        question = {"question": "Where was Christopher Nolan born?", "allow_enrich": True}
        first = client.post("/api/query", json=question).json()
        tools = [s["tool"] for s in first["trace"]["steps"]]
        assert "EnrichGraph" in tools
        planned = client.get("/api/health").json()["planned_enrichment_s"]
        retry = tools.index("EnrichGraph")
        assert planned == pytest.approx(sum(s["seconds"] for s in first["trace"]["steps"][retry:]), abs=0.01)
        client.app.state.admission.record_enrichment(500.0)  # as if rounds here had taken minutes
        client.app.state.admission.record_enrichment(500.0)
        second = client.post("/api/query", json=question).json()
        decide = [s["outputs"] for s in second["trace"]["steps"] if s["tool"] == "AnalyzeDecide"]
        assert "EnrichGraph" not in [s["tool"] for s in second["trace"]["steps"]]
        assert decide[0]["reason"] == "no time left to enrich within the request's limit"


def test_a_planned_question_returns_its_chain_and_draws_every_hops_passages(gap_config, spacy_extractor):
    """The reader is scripted (a plan, then two sub-answers: what a real model says is not the point);
    the server, graph and indexes are real."""
    from tests.scripted_llm import ScriptedLLM

    plan = '{"hops": ["Who directed Inception?", "Where was #1 born?"]}'
    reader = ScriptedLLM([(plan, 2.0), ("Christopher Nolan", 1.1), ("London", 1.1)])
    plans_first = dataclasses.replace(gap_config, agent=dataclasses.replace(gap_config.agent, plan_when="always"))
    session = EnrichRAG(plans_first, llm=reader, extractor=spacy_extractor)
    with TestClient(create_app(plans_first, session), base_url=LOCAL) as client:
        data = client.post("/api/query", json={"question": "Where was the director of Inception born?", "allow_enrich": False}).json()
    session.close()
    assert data["answer"] == "London" and [h["answer"] for h in data["chain"]] == ["Christopher Nolan", "London"]
    drawn = {n["chunk_id"] for n in data["subgraph"]["nodes"] if n["kind"] == "passage"}
    assert all(set(hop["chunk_ids"]) <= drawn for hop in data["chain"]) and all(hop["chunk_ids"] for hop in data["chain"])
    assert [s["tool"] for s in data["trace"]["steps"]].count("Hop") == 2


def test_a_reply_says_how_many_tokens_the_reader_spent_on_it(gap_config, spacy_extractor, gemma_llamacpp):
    """The llama.cpp runtime with the small shipped model: it counts tokens, the transformers reader does not."""
    rag = EnrichRAG(gap_config, llm=gemma_llamacpp, extractor=spacy_extractor)
    try:
        with TestClient(create_app(gap_config, rag), base_url=LOCAL) as client:
            first = client.post("/api/query", json={"question": "Who directed Inception?", "allow_enrich": False}).json()
            again = client.post("/api/query", json={"question": "Who directed Inception?", "allow_enrich": False}).json()
    finally:
        rag.close()
    assert first["tokens"]["prefill_tokens"] > 0 and first["tokens"]["generated_tokens"] >= 1
    assert again["tokens"]["cached_tokens"] > again["tokens"]["prefill_tokens"]  # the same prompts, read from the cache
