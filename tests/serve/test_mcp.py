"""`enrich-rag mcp` driven by the MCP SDK's own client over stdio: the real command in a subprocess, on
the small real build, with the embedded reader answering `ask`."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
import yaml

mcp = pytest.importorskip("mcp")


def _params(gap_config, tmp_path) -> Path:
    params = tmp_path / "mcp-params.yaml"
    params.write_text(
        yaml.safe_dump(
            {"paths": dict(gap_config.paths.__dict__), "corpus": dict(gap_config.corpus.__dict__), "llm": {"backend": "embedded"}}
        )
    )
    return params


def _data(result):
    """A tool's structured result (the SDK wraps a list as {"result": [...]})."""
    assert not result.is_error, result.content
    data = result.structured_content
    return data["result"] if set(data) == {"result"} else data


@pytest.mark.slow  # the real reader in a subprocess
def test_an_agent_asks_searches_adds_and_lists_through_the_sdk_client(gap_config, tmp_path):
    from mcp import Client, StdioServerParameters

    command = StdioServerParameters(
        command=str(Path(sys.executable).with_name("enrich-rag")), args=["mcp", "--params", str(_params(gap_config, tmp_path))]
    )
    progress: list[str] = []

    async def on_progress(value, total, message):
        progress.append(message)

    async def session():
        async with Client(command, read_timeout_seconds=600) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            added = _data(
                await client.call_tool(
                    "add_text", {"text": "# Tenet\n\nTenet is a 2020 film starring John David Washington.", "doc_id": "tenet"}
                )
            )
            listed = _data(await client.call_tool("list_documents", {}))
            found = _data(await client.call_tool("search", {"query": "2020 film John David Washington", "k": 2}))
            answer = _data(await client.call_tool("ask", {"question": "Who directed Inception?"}, progress_callback=on_progress))
            return tools, added, listed, found, answer

    tools, added, listed, found, answer = anyio.run(session)
    assert tools == {"ask", "search", "add_text", "list_documents"}
    assert added["added"] == ["tenet"]
    assert {"tenet", "inception"} <= {d["doc_id"] for d in listed}
    assert found[0]["doc_id"] == "tenet" and found[0]["score"] == 1.0 and len(found) == 2
    assert "Nolan" in answer["answer"] and answer["citations"] and answer["citations"][0]["chunk_id"].startswith("inception::")
    assert answer["quote"]["doc_id"] == "inception" and "Nolan" in answer["quote"]["text"]  # the line that states it
    assert progress[0].startswith("reading") and progress[1].startswith("AnalyzeQuery")  # at once, then each step as it ran


def test_the_tools_are_listed_while_the_project_opens_and_a_call_waits_for_it(gap_config):
    """The project opens on a thread as the server starts: the client lists the tools while it is still
    opening (held open here by an event), and a tool called then answers once it is open. In-process
    client, real project."""
    import threading

    from mcp import Client

    from enrich_rag.api import EnrichRAG
    from enrich_rag.serve.mcp_server import Opening, mcp_server

    release = threading.Event()

    def slow_open() -> EnrichRAG:
        release.wait(60)
        return EnrichRAG(gap_config)

    opening = Opening(lambda: {"default": slow_open()})

    async def session():
        async with Client(mcp_server(opening)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            listed_before_open = not opening.ready
            release.set()
            found = _data(await client.call_tool("search", {"query": "Who directed Inception?", "k": 1}))
            return tools, listed_before_open, found

    tools, listed_before_open, found = anyio.run(session)
    opening.project().close()
    assert tools == {"ask", "search", "add_text", "list_documents"} and listed_before_open
    assert found[0]["doc_id"] == "inception"


def test_a_project_that_cannot_open_fails_the_tool_call_with_its_one_line_reason():
    from mcp import Client

    from enrich_rag.errors import EnrichRagError
    from enrich_rag.serve.mcp_server import Opening, mcp_server

    def broken_open():
        raise EnrichRagError("graph folder not found: /nowhere")

    async def session():
        async with Client(mcp_server(Opening(lambda: {"default": broken_open()}))) as client:
            return await client.call_tool("search", {"query": "x"})

    result = anyio.run(session)
    assert result.is_error and "graph folder not found: /nowhere" in result.content[0].text
