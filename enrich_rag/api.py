"""EnrichRAG, the front door: open a built project, or build one from a folder, then ask, enrich, add and
remove documents, evaluate and look at the graph. The CLI goes through here for every command that
opens a project; the server and the evaluation runner hold the same `Session` one floor down.

    from enrich_rag import EnrichRAG

    rag = EnrichRAG.from_folder("docs/")          # or EnrichRAG.open("params.yaml")
    answer = rag.ask("Who directed Inception?")
    print(answer.answer, [c.chunk_id for c in answer.citations])
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from enrich_rag.agent.enrich_graph import EnrichResult
from enrich_rag.agent.loop import Agent, Answer, validate_question
from enrich_rag.agent.resources import Resources
from enrich_rag.agent.session import Session
from enrich_rag.agent.stream import streamed
from enrich_rag.config import Config, load_config
from enrich_rag.errors import EnrichRagError
from enrich_rag.llm.base import LLM
from enrich_rag.storage.graph_writer import Reconciliation
from enrich_rag.storage.passages import Passage

if TYPE_CHECKING:
    from enrich_rag.stages.corpus_update import CorpusUpdate
    from enrich_rag.storage.corpus_changes import DocumentEntry

MAX_SEARCH_K = 100


class Graph:
    """The knowledge graph under a project: its partitions (the seed, then one per enrichment), counts,
    consistency, rollback and export."""

    def __init__(self, resources: Resources):
        self._resources = resources

    def partitions(self) -> list[dict[str, Any]]:
        """Seed first, then enrichments in write order: rows, facts by extractor, how DVC versions each."""
        return self._resources.writer.partitions()

    def stats(self) -> dict[str, Any]:
        return self._resources.store.counts()

    def verify(self) -> list[str]:
        """What disagrees between partitions, graph index and DVC records, one line each (empty: consistent)."""
        return self._resources.writer.verify()

    def rollback(self, partition: str) -> dict[str, Any]:
        """Remove an enrichment, add or remove partition (documents added come out, removed ones back);
        for a compaction, restore the partitions it merged."""
        return self._resources.writer.rollback(partition)

    def compact(self) -> dict[str, Any] | None:
        """Merge the enrichment partitions into one (None: fewer than two)."""
        return self._resources.writer.compact()

    def export(self, path: Path | str, upto: str | None = None) -> Path:
        """GraphML of the graph now, or of the version ending at partition `upto`."""
        from enrich_rag.storage.export import graph_to_networkx, version_partitions, write_graphml

        config = self._resources.config
        return write_graphml(graph_to_networkx(self._resources.store, version_partitions(config.paths.graph, upto)), path)


class EnrichRAG:
    """One project: its settings, the open graph, indexes and models (loaded on first use)."""

    def __init__(
        self,
        config: Config,
        params: Path | str = "params.yaml",
        overlay: Path | str | None = None,
        reconcile: bool = True,
        llm: LLM | None = None,
    ):
        """`reconcile=False`: look at the graph as it is, never write (`graph verify`). `llm`: a reader
        already loaded (any object with the `LLM` methods) instead of the configured one."""
        self.config, self.params, self.overlay = config, Path(params), overlay
        self.session = Session(config, llm=llm, reconcile=reconcile)  # what a killed write left is finished first
        self.graph = Graph(self.resources)

    @property
    def resources(self) -> Resources:
        return self.session.resources

    @property
    def repaired(self) -> Reconciliation | None:
        return self.session.repaired

    @property
    def agent(self) -> Agent:
        return self.session.agent()

    @classmethod
    def open(
        cls, params: Path | str = "params.yaml", overlay: Path | str | None = None, reconcile: bool = True, llm: LLM | None = None
    ) -> EnrichRAG:
        """A built project: `params.yaml`, and optionally an overlay (`configs/<name>.yaml`, a workspace's `config.yaml`)."""
        return cls(load_config(params, overlay), params, overlay, reconcile, llm)

    @classmethod
    def from_folder(
        cls, folder: Path | str, workspace: Path | str | None = None, params: Path | str = "params.yaml", llm: LLM | None = None
    ) -> EnrichRAG:
        """Build (or reuse) a workspace for a folder of .txt, .md, .rst, .html, .docx, .pdf and .jsonl files, and open it."""
        from enrich_rag.stages.folder import build_folder

        overlay = build_folder(folder, workspace, params)
        return cls.open(params, overlay, llm=llm)

    @overload
    def ask(self, question: str, enrich: bool = ..., stream: Literal[False] = ...) -> Answer: ...
    @overload
    def ask(self, question: str, enrich: bool = ..., *, stream: Literal[True]) -> Generator[dict[str, Any], None, None]: ...

    def ask(self, question: str, enrich: bool = True, stream: bool = False) -> Answer | Generator[dict[str, Any], None, None]:
        """The answer with its citations, perplexity, sufficiency and trace; `enrich=False` never writes.
        `stream=True`: the question's events as they happen (`agent/stream.py`: a `step` per tool, then
        the answer's `token`s, then `answer` with the whole answer as JSON); closing the iterator stops
        the question before its next tool."""
        if not stream:
            return self.agent.answer(question, allow_enrich=enrich)
        agent = self.agent
        validate_question(question)  # a bad question fails here, not on the first `next`
        return streamed(
            lambda on_step, should_stop: agent.answer(question, allow_enrich=enrich, should_stop=should_stop, on_step=on_step).to_dict()
        )

    def enrich(self, question: str) -> EnrichResult:
        """One EnrichGraph round for what the question needs (a new partition when it found anything)."""
        return self.agent.enrich(validate_question(question), [])

    def add(self, *paths: Path | str) -> CorpusUpdate:
        """Add new or changed documents (files or folders) to the corpus and graph; unchanged ones are skipped."""
        return self.resources.add_documents(list(paths))

    def add_text(self, text: str, doc_id: str = "", title: str = "") -> CorpusUpdate:
        """A string as a document (markdown headings make its sections). Without `doc_id` the id is the
        text's hash (the same text twice is one document); with it, new text under an id replaces the old."""
        from enrich_rag.ingest.documents import text_document

        return self.resources.add([text_document(text, doc_id, title)])

    def documents(self) -> list[DocumentEntry]:
        """Every document the corpus has held: id, title, live chunks, where it came from, built/added/removed."""
        return self.resources.passages.documents()

    def search(self, query: str, k: int = 5, graph: bool = True) -> list[Passage]:
        """Passages with scores and no reader (bring your own): the hybrid search re-ranked by GraphRank;
        `graph=False`: the hybrid search alone."""
        if not 1 <= k <= MAX_SEARCH_K:
            raise EnrichRagError(f"k must be between 1 and {MAX_SEARCH_K}, got {k}")
        return self.agent.retrieve(query, k, graph)

    def remove(self, *doc_ids: str) -> CorpusUpdate:
        """Remove documents by id: their passages, facts and links are no longer read or cited."""
        return self.resources.remove_documents(list(doc_ids))

    def evaluate(self, config: Path | str, limit: int = 0, methods: tuple[str, ...] = ()) -> Path:
        """A benchmark run (`configs/<dataset>.yaml`); returns its results folder (metrics.json, table.md)."""
        from enrich_rag.eval.runner import run_evaluation

        return run_evaluation(self.params, config, limit, methods)

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> EnrichRAG:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
