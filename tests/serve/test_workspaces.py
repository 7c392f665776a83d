"""Several built folders in one server: each workspace answers from its own documents, keeps its own
writes and token, and all share one reader. Real builds, indexes and HTTP; the reader is scripted
(the answers are not what is tested) except where the shared model itself is."""

from __future__ import annotations

import pytest

from tests.scripted_llm import ScriptedLLM
from tests.serve.conftest import PROJECT_ROOT, build_two_workspaces, serving

pytestmark = pytest.mark.integration  # builds two folders


@pytest.fixture
def two_projects(tmp_path):
    from enrich_rag.api import EnrichRAG
    from enrich_rag.config import load_config

    overlays = build_two_workspaces(tmp_path)
    reader = ScriptedLLM([("1911", 1.1), ("Varno", 1.1)])
    projects = {n: EnrichRAG(load_config(PROJECT_ROOT / "params.yaml", o), llm=reader) for n, o in overlays.items()}
    yield projects
    for project in projects.values():
        project.close()


def _client(projects):
    from fastapi.testclient import TestClient

    from enrich_rag.serve.app import create_app

    (name, first), *others = projects.items()
    return TestClient(create_app(first.config, first, name=name, others=dict(others)), base_url="http://127.0.0.1")


def test_each_workspace_answers_from_its_own_folder_and_the_first_also_at_api(two_projects):
    with _client(two_projects) as client:
        listed = client.get("/api/workspaces").json()
        assert [w["name"] for w in listed["workspaces"]] == ["bridges", "towers"] and listed["default"] == "bridges"
        bridge = client.post("/w/bridges/api/query", json={"question": "When was the Zorblat Bridge built?"}).json()
        tower = client.post("/w/towers/api/query", json={"question": "Where does the Plimsoll Tower stand?"}).json()
        assert bridge["answer"] == "1911" and tower["answer"] == "Varno"
        assert {c["doc_id"] for c in bridge["citations"]} == {"zorblat.md"}
        assert {c["doc_id"] for c in tower["citations"]} == {"plimsoll.md"}
        assert client.get("/api/graph/stats").json() == client.get("/w/bridges/api/graph/stats").json()
        assert client.get("/w/towers/api/graph/stats").json() != client.get("/w/bridges/api/graph/stats").json()
        assert client.get("/w/nowhere/api/graph/stats").status_code == 404
        models = [m["id"] for m in client.get("/v1/models").json()["data"]]
        assert models == ["enrich-rag", "enrich-rag/bridges", "enrich-rag/towers"]
        chat = client.post("/v1/chat/completions", json={"model": "enrich-rag/nowhere", "messages": [{"role": "user", "content": "x"}]})
        assert chat.status_code == 404 and "enrich-rag/towers" in chat.json()["error"]["message"]


def test_a_write_to_one_workspace_never_shows_in_the_other_and_its_token_is_its_own(two_projects):
    bridges, towers = two_projects["bridges"], two_projects["towers"]
    with _client(two_projects) as client:
        servers = client.app.state.servers
        token = {n: s.token_path.read_text(encoding="utf-8").strip() for n, s in servers.items()}
        assert token["bridges"] != token["towers"]
        as_bridges = {"Authorization": f"Bearer {token['bridges']}"}
        saved = client.post("/w/bridges/api/settings", json={"allow_enrich": False}, headers=as_bridges)
        assert saved.status_code == 200 and saved.json()["overlay"]
        assert client.get("/w/towers/api/settings").json()["overlay"] == {}
        other = client.post("/w/towers/api/settings", json={"allow_enrich": False}, headers=as_bridges)
        assert other.status_code == 401
        bridges.add_text("# Quell River\n\nThe river Quell rises in the Ossian hills.", "quell")
        assert len(client.get("/w/bridges/api/graph/partitions").json()) == 2
        assert len(client.get("/w/towers/api/graph/partitions").json()) == 1
    assert "quell" in {p.doc_id for p in bridges.search("Where does the river Quell rise?", 3)}
    assert "quell" not in {p.doc_id for p in towers.search("Where does the river Quell rise?", 3)}
    assert "quell" not in {d.doc_id for d in towers.documents()}


@pytest.mark.slow  # loads the configured reader once, for both
def test_served_workspaces_share_one_reader_and_one_line(tmp_path):
    import yaml

    from enrich_rag.llm.priority import QuestionsFirst
    from enrich_rag.serve.app import served_app
    from enrich_rag.stages.folder import served_workspaces

    overlays = build_two_workspaces(tmp_path)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(yaml.safe_load((PROJECT_ROOT / "params.yaml").read_text()) | {"llm": {"backend": "embedded"}}))
    named = served_workspaces([f"{n}={o.parent}" for n, o in overlays.items()])
    app = served_app(params, named, "127.0.0.1", ())
    servers = app.state.servers
    try:
        readers = [s.rag.resources.llm for s in servers.values()]
        assert all(isinstance(r, QuestionsFirst) for r in readers) and readers[0].llm is readers[1].llm
        assert servers["bridges"].admission is servers["towers"].admission
        with serving(app) as url:
            import httpx

            answer = httpx.post(f"{url}/w/towers/api/query", json={"question": "Where does the Plimsoll Tower stand?"}, timeout=300).json()
        assert {c["doc_id"] for c in answer["citations"]} == {"plimsoll.md"}
    finally:
        for server in servers.values():
            server.rag.close()


def test_workspace_specs_are_checked_before_anything_opens(tmp_path):
    from enrich_rag.errors import InputDataError
    from enrich_rag.stages.folder import served_workspaces

    overlays = build_two_workspaces(tmp_path)
    folder = overlays["towers"].parent
    assert served_workspaces([str(folder), f"b={overlays['bridges']}"]) == {"towers": overlays["towers"], "b": overlays["bridges"]}
    for specs, said in (
        ([f"a b={folder}"], "workspace name 'a b'"),
        ([f"x={folder}", f"x={folder}"], "workspace 'x' is given twice"),
        ([f"x={tmp_path}"], "not a built workspace"),
    ):
        with pytest.raises(InputDataError, match=said):
            served_workspaces(specs)
