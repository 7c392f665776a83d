"""`enrich-rag mcp`: the project as a Model Context Protocol server (stdio), so coding agents and chat
clients reach the user's documents as tools: `ask` (the answer with citations; each step reported as
progress), `search` (passages, no reader), `add_text` and `list_documents`.

Everything goes through the front door (`EnrichRAG`), opened once, on a thread of its own as the server
starts (`Opening`): a client lists the tools at once (clients give a server a few seconds), a tool called
before the project is open waits for it, and an `ask` reports that it waits. Several workspaces (built
folders) may be served at once, one reader for all: each tool takes `workspace` (default: the first).
Stdout is the protocol's: the project's own output goes to stderr.
"""

# No `from __future__ import annotations`: the SDK reads each tool's signature (its `Context` parameter
# and argument types) at registration, so the annotations must be objects, not strings.
import threading
from collections.abc import Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from enrich_rag.errors import EnrichRagError

if TYPE_CHECKING:  # the server imports no more than it needs to list its tools (they load with the project)
    from mcp.server.mcpserver import MCPServer

    from enrich_rag.stages.corpus_update import CorpusUpdate
    from enrich_rag.storage.corpus_changes import DocumentEntry
    from enrich_rag.storage.passages import Passage


class Project(Protocol):
    """What the server asks of the project (`EnrichRAG`, one floor up, is one)."""

    config: Any

    def ask(self, question: str, *, enrich: str | None = ..., stream: bool) -> Generator[dict[str, Any], None, None]: ...

    def search(self, query: str, k: int = ..., graph: bool = ...) -> "list[Passage]": ...

    def add_text(self, text: str, doc_id: str = ..., title: str = ...) -> "CorpusUpdate": ...

    def documents(self) -> "list[DocumentEntry]": ...

    def close(self) -> None: ...


class Opening:
    """The workspaces' projects, opened on a thread of their own: `project(workspace)` waits for them
    (and raises what opening them raised). The thread starts opening at the first call that needs them,
    or `after_s` after the server starts, whichever is first: opening imports the models' libraries, and
    on few cores that would slow the server's own start, the answer to a client's `tools/list`."""

    def __init__(self, open_projects: Callable[[], Mapping[str, Project]], after_s: float = 2.0):
        self._go, self._done = threading.Event(), threading.Event()
        self._projects: dict[str, Project] = {}
        self._error: BaseException | None = None
        threading.Thread(target=self._open, args=(open_projects, after_s), name="open-project", daemon=True).start()

    def _open(self, open_projects: Callable[[], Mapping[str, Project]], after_s: float) -> None:
        self._go.wait(after_s)
        try:
            self._projects = dict(open_projects())
        except BaseException as exc:  # handed to the tool call that waits for it
            self._error = exc
        finally:
            self._done.set()

    @property
    def ready(self) -> bool:
        return self._done.is_set()

    def project(self, workspace: str = "") -> Project:
        """`workspace`: a served workspace's name ("": the first)."""
        self._go.set()
        self._done.wait()
        if self._error is not None:
            raise self._error
        if not workspace:
            return next(iter(self._projects.values()))
        if workspace not in self._projects:
            raise EnrichRagError(f"no workspace '{workspace[:60]}' here; served: {', '.join(self._projects)}")
        return self._projects[workspace]

    def projects(self) -> list[Project]:
        """Those opened (none while opening, or when it failed)."""
        return list(self._projects.values()) if self.ready else []


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
        "spent": answer.get("spent"),  # the reader budget ran out: the best read so far
        "citations": [_citation(c) for c in answer["citations"]],
        "chain": [{k: h.get(k) for k in ("question", "answer", "grounded")} for h in answer.get("chain", [])],
    }


def mcp_server(opening: Opening, enrich: bool = False, workspaces: tuple[str, ...] = ()) -> "MCPServer":
    """`enrich`: may `ask` write to the graph (EnrichGraph) when the evidence is not enough.
    `workspaces`: the names served, told to the client (none: one project)."""
    import anyio.to_thread
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    named = (
        f" Workspaces (separate document collections): {', '.join(workspaces)}; pass `workspace` to pick one (default: {workspaces[0]})."
        if len(workspaces) > 1
        else ""
    )
    server = MCPServer("enrich-rag", instructions=INSTRUCTIONS + named)

    async def on_project(call: Callable[[Project], Any], workspace: str) -> Any:
        """A tool's work on a worker thread, once the project is open (the event loop keeps answering); a
        project that cannot open, an unknown workspace or bad input is the call's one-line error."""
        try:
            return await anyio.to_thread.run_sync(lambda: call(opening.project(workspace)))
        except EnrichRagError as exc:
            raise ToolError(str(exc)) from exc

    @server.tool()
    async def ask(question: str, ctx: Context, workspace: str = "") -> dict[str, Any]:
        """Answer a question over the documents: the answer, the line of the documents that states it,
        whether the evidence settled it, and the passages it rests on (a multi-hop question also returns
        its chain of sub-answers)."""
        from enrich_rag.agent.answer import permitted
        from enrich_rag.agent.stream import ANSWER, STEP

        if not opening.ready:
            await ctx.report_progress(0, message="loading the project's indexes: the first answer waits for them")
        else:  # at once: a client that times out on silence hears that the question is being answered
            await ctx.report_progress(0, message="reading: each step is reported as it finishes")
        events = await on_project(lambda rag: rag.ask(question, enrich=permitted(enrich, rag.config.agent), stream=True), workspace)
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
    async def search(query: str, k: int = 5, workspace: str = "") -> list[dict[str, Any]]:
        """Passages for a query, best first, with scores relative to the best (no reader: read them yourself)."""
        return await on_project(lambda rag: [p.to_row() | {"score": round(p.score, 4)} for p in rag.search(query, k)], workspace)

    @server.tool()
    async def add_text(text: str, title: str = "", doc_id: str = "", workspace: str = "") -> dict[str, Any]:
        """Add a document given as text (markdown headings make sections). The same id again replaces it."""
        return await on_project(lambda rag: rag.add_text(text, doc_id, title).record(), workspace)

    @server.tool()
    async def list_documents(include_removed: bool = False, workspace: str = "") -> list[dict[str, Any]]:
        """The documents: id, title, chunks, built or added (and by which partition)."""
        return await on_project(lambda rag: [d.record() for d in rag.documents() if include_removed or d.status != "removed"], workspace)

    return server


def serve_stdio(opening: Opening, enrich: bool = False, workspaces: tuple[str, ...] = ()) -> None:
    mcp_server(opening, enrich, workspaces).run("stdio")


def _citation(citation: dict[str, Any]) -> dict[str, Any]:
    """A source as a tool result names it: a passage by its title, a fact by its triple."""
    return {k: citation[k] for k in ("kind", "chunk_id", "doc_id", "evidence")} | {"source": citation.get("title") or citation.get("fact")}
