"""`enrich-rag mcp`: the project as a Model Context Protocol server (stdio), so coding agents and chat
clients reach the user's documents as tools: `ask` (the answer with citations; each step reported as
progress), `search` (passages, no reader), `add_text` and `list_documents`.

Everything goes through the front door (`EnrichRAG`), opened once; the reader loads on the first
`ask`. Stdout is the protocol's: the project's own output goes to stderr.
"""

# No `from __future__ import annotations`: the SDK reads each tool's signature (its `Context` parameter
# and argument types) at registration, so the annotations must be objects, not strings.
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Protocol

from enrich_rag.agent.stream import ANSWER, STEP
from enrich_rag.stages.corpus_update import CorpusUpdate
from enrich_rag.storage.corpus_changes import DocumentEntry
from enrich_rag.storage.passages import Passage

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


class Project(Protocol):
    """What the server asks of the project (`EnrichRAG`, one floor up, is one)."""

    def ask(self, question: str, enrich: bool = ..., *, stream: bool) -> Generator[dict[str, Any], None, None]: ...

    def search(self, query: str, k: int = ..., graph: bool = ...) -> list[Passage]: ...

    def add_text(self, text: str, doc_id: str = ..., title: str = ...) -> CorpusUpdate: ...

    def documents(self) -> list[DocumentEntry]: ...


INSTRUCTIONS = (
    "Tools over the user's own document collection (a local knowledge-graph RAG). `ask` answers a question "
    "with citations to passages; `sure: false` means the evidence read did not settle it; `confidence` "
    "(0-1, where the corpus has a fitted model) is the chance the answer is right. `search` returns passages "
    "for you to read yourself. `add_text` adds a document; `list_documents` lists them."
)


def _answer_record(answer: dict[str, Any]) -> dict[str, Any]:
    """What an agent needs of an answer (the trace and subgraph stay with the web page)."""
    return {
        "answer": answer["answer"],
        "sure": answer["sure"],
        "confidence": answer.get("confidence"),
        "perplexity": answer["perplexity"],
        "quote": answer.get("quote"),
        "citations": [
            {k: c[k] for k in ("kind", "chunk_id", "doc_id", "evidence")} | {"source": c.get("title") or c.get("fact")}
            for c in answer["citations"]
        ],
        "chain": [{k: h.get(k) for k in ("question", "answer", "grounded")} for h in answer.get("chain", [])],
    }


def mcp_server(rag: Project, enrich: bool = False) -> "MCPServer":
    """`enrich`: may `ask` write to the graph (EnrichGraph) when the evidence is not enough."""
    import anyio.to_thread
    from mcp.server.mcpserver import Context, MCPServer

    server = MCPServer("enrich-rag", instructions=INSTRUCTIONS)

    @server.tool()
    async def ask(question: str, ctx: Context) -> dict[str, Any]:
        """Answer a question over the documents: the answer, whether the evidence settled it, and the
        passages it rests on (a multi-hop question also returns its chain of sub-answers)."""
        events = rag.ask(question, enrich=enrich, stream=True)
        done = object()
        try:
            step = 0
            while (event := await anyio.to_thread.run_sync(next, events, done)) is not done:
                assert isinstance(event, dict)
                if event["event"] == STEP:
                    step += 1
                    await ctx.report_progress(step, message=f"{event['tool']} ({event['seconds']:.1f} s) {event['summary']}".strip())
                elif event["event"] == ANSWER:
                    return _answer_record(event["answer"])
        finally:
            events.close()  # a cancelled call stops the question before its next tool
        raise RuntimeError("the question ended without an answer")

    @server.tool()
    def search(query: str, k: int = 5) -> list[dict[str, Any]]:
        """Passages for a query, best first, with scores relative to the best (no reader: read them yourself)."""
        return [p.to_row() | {"score": round(p.score, 4)} for p in rag.search(query, k)]

    @server.tool()
    def add_text(text: str, title: str = "", doc_id: str = "") -> dict[str, Any]:
        """Add a document given as text (markdown headings make sections). The same id again replaces it."""
        return rag.add_text(text, doc_id, title).record()

    @server.tool()
    def list_documents(include_removed: bool = False) -> list[dict[str, Any]]:
        """The documents: id, title, chunks, built or added (and by which partition)."""
        return [d.record() for d in rag.documents() if include_removed or d.status != "removed"]

    return server


def serve_stdio(rag: Project, enrich: bool = False) -> None:
    mcp_server(rag, enrich).run("stdio")


def _citation(citation: dict[str, Any]) -> dict[str, Any]:
    """A source as a tool result names it: a passage by its title, a fact by its triple."""
    return {k: citation[k] for k in ("kind", "chunk_id", "doc_id", "evidence")} | {"source": citation.get("title") or citation.get("fact")}
