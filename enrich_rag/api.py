"""EnrichRAG, the one door: open a built project, or build one from a folder, then ask, enrich, add and
remove documents, evaluate and look at the graph. Every caller comes through here: the CLI, the server,
the MCP server, the evaluation runner, the story demo, test-set generation and the build summary. It is
the only place that opens a project's stores, reconciles them and builds an agent.

    from enrich_rag import EnrichRAG

    rag = EnrichRAG.from_folder("docs/")          # or EnrichRAG.open("params.yaml")
    answer = rag.ask("Who directed Inception?")
    print(answer.answer, [c.chunk_id for c in answer.citations])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from enrich_rag.agent.answer import Answer
from enrich_rag.agent.enrich_graph import EnrichResult
from enrich_rag.agent.loop import Agent
from enrich_rag.agent.stream import Hooks, streamed
from enrich_rag.config import AgentConfig, Config, EvidenceConfig, load_config
from enrich_rag.errors import EnrichRagError
from enrich_rag.evidence.learned_facts import learned_record, learned_rows
from enrich_rag.evidence.query_analysis import validate_question
from enrich_rag.extract.base import Extractor
from enrich_rag.llm.base import LLM
from enrich_rag.resources import Resources
from enrich_rag.storage.enrichment_jobs import EnrichmentJob
from enrich_rag.storage.graph_writer import Reconciliation
from enrich_rag.storage.passages import Passage

if TYPE_CHECKING:
    from enrich_rag.ingest.sections import Document
    from enrich_rag.stages.corpus_update import CorpusUpdate
    from enrich_rag.storage.corpus_changes import DocumentEntry

MAX_SEARCH_K = 100
MAX_AGENTS = 4  # loops kept built, one per agent and evidence settings asked with
Settings = tuple[AgentConfig | None, EvidenceConfig | None]  # agent and evidence settings for one question


class Graph:
    """The knowledge graph under a project: its partitions (the seed, then one per enrichment), counts,
    consistency, rollback and export."""

    def __init__(self, resources: Resources):
        self._resources = resources

    def partitions(self) -> list[dict[str, Any]]:
        """The graph's partitions, the seed first, then enrichments in write order.

        Returns:
            One dict per partition: its name, rows, facts by extractor, and how DVC versions it.
        """
        return self._resources.writer.partitions()

    def stats(self) -> dict[str, Any]:
        """How big the graph is now.

        Returns:
            Counts of nodes, edges and links by kind.
        """
        return self._resources.store.counts()

    def verify(self) -> list[str]:
        """Check that partitions, graph index and DVC records agree.

        Returns:
            What disagrees, one line each; empty when the graph is consistent.
        """
        return self._resources.writer.verify()

    def rollback(self, partition: str) -> dict[str, Any]:
        """Undo one write: an enrichment, add or remove partition (documents added come out, removed
        ones come back), or a compaction (the partitions it merged are restored).

        Args:
            partition: the partition's name, as `partitions()` lists it.

        Returns:
            What was undone: the partition, the rows and index entries removed, the DVC record.

        Raises:
            StorageError: no such partition, the seed, a partition compacted into another, or no DVC copy.
        """
        return self._resources.writer.rollback(partition)

    def compact(self) -> dict[str, Any] | None:
        """Merge the enrichment partitions into one, so reads open fewer files.

        Returns:
            The merged partition and what it replaced; None when there are fewer than two.
        """
        return self._resources.writer.compact()

    def reconcile(self) -> Reconciliation:
        """Finish or roll back what a killed write left (opening a project does this unless told not to).

        Returns:
            What was finished and what was rolled back.
        """
        return self._resources.writer.reconcile()

    def repair(self) -> dict[str, str]:
        """Restore damaged partitions from the DVC cache, or remove them with their index rows without a copy.

        Returns:
            Each damaged partition and what was done to it.

        Raises:
            StorageError: the seed is damaged and the DVC cache cannot restore it.
        """
        return self._resources.writer.repair()

    def learned(self) -> list[dict[str, Any]]:
        """Facts the loop learned from grounded reads (evidence/learned_facts.py), newest first.

        Returns:
            One dict per fact: its id, subject, question, answer, cited chunk, reader and partition.
        """
        return [learned_record(row) for row in learned_rows(self._resources.store)]

    def forget(self, *fact_ids: str) -> dict[str, Any]:
        """Hide facts from every later question: a `forget-` partition names them (rolling it back
        brings them back).

        Args:
            fact_ids: the ids `learned()` lists.

        Returns:
            The partition written, the ids forgotten and its DVC record.

        Raises:
            StorageError: an id is not a learned fact of the graph, or nothing was forgotten.
        """
        commit = self._resources.writer.forget(list(fact_ids))
        return {"partition": commit.partition, "forgotten": list(fact_ids), "dvc": commit.dvc}

    def find(self, entity: str) -> list[dict[str, Any]]:
        """Nodes whose name matches an entity.

        Args:
            entity: a name: its exact normalised form first, then names and aliases that contain it.

        Returns:
            The matching nodes: id, name, kind.
        """
        return self._resources.store.find_nodes(entity)

    def neighbors(self, node_id: str, limit: int) -> list[dict[str, Any]]:
        """The facts around one node.

        Args:
            node_id: a node's id, as `find` gives it.
            limit: at most this many facts.

        Returns:
            The facts (subject, relation, object, evidence, chunk, partition).
        """
        return self._resources.store.neighbors([node_id], limit=limit)

    def networkx(self, upto: str | None = None) -> Any:
        """The graph as a networkx graph (the `networkx` package is imported here).

        Args:
            upto: the version ending at this partition; None: the graph now.

        Returns:
            A `networkx.MultiDiGraph` of nodes and facts.

        Raises:
            StorageError: no partition `upto`.
        """
        from enrich_rag.storage.export import graph_to_networkx, version_partitions

        return graph_to_networkx(self._resources.store, version_partitions(self._resources.config.paths.graph, upto))

    def export(self, path: Path | str, upto: str | None = None) -> Path:
        """Write the graph as GraphML.

        Args:
            path: the file to write (written atomically).
            upto: the version ending at this partition; None: the graph now.

        Returns:
            The path written.

        Raises:
            StorageError: no partition `upto`.
        """
        from enrich_rag.storage.export import write_graphml

        return write_graphml(self.networkx(upto), path)


class EnrichRAG:
    """One project: its settings, the open graph, indexes and models (loaded on first use). Whatever a
    killed write left is finished or undone before the first question (`reconcile`), unless the caller
    only inspects (`graph verify` must see the graph as it is)."""

    def __init__(
        self,
        config: Config,
        params: Path | str = "params.yaml",
        overlay: Path | str | None = None,
        reconcile: bool = True,
        llm: LLM | None = None,
        extractor: Extractor | None = None,
    ):
        """`reconcile=False`: look at the graph as it is, never write (`graph verify`). `llm`, `extractor`: a
        reader or deep extractor already loaded (any object with their methods) instead of the configured one."""
        self.config, self.params, self.overlay = config, Path(params), overlay
        self.resources = Resources(config, llm=llm, extractor=extractor)
        self.repaired: Reconciliation | None = None  # what reconciling changed
        self.unreconciled = ""  # why reconciling could not write (a folder this user may only read)
        if reconcile:
            try:
                self.repaired = self.resources.writer.reconcile()
            except OSError as exc:
                self.unreconciled = str(exc).splitlines()[0]
        self._agents: dict[tuple[AgentConfig, EvidenceConfig], Agent] = {}
        self.graph = Graph(self.resources)

    def agent(self, agent: AgentConfig | None = None, evidence: EvidenceConfig | None = None) -> Agent:
        """The loop with the project's settings, or with other agent and evidence settings (a method of
        the evaluation, the web page's saved settings); the last few are kept built.

        Args:
            agent: agent settings; None: the project's.
            evidence: evidence settings; None: the project's.

        Returns:
            The `Agent` (`agent/loop.py`).
        """
        key = (agent or self.config.agent, evidence or self.config.evidence)
        if key not in self._agents:
            while len(self._agents) >= MAX_AGENTS:  # the oldest settings go first (the page may change them often)
                self._agents.pop(next(iter(self._agents)))
            self._agents[key] = Agent(self.resources, *key)
        return self._agents[key]

    @classmethod
    def open(
        cls, params: Path | str = "params.yaml", overlay: Path | str | None = None, reconcile: bool = True, llm: LLM | None = None
    ) -> EnrichRAG:
        """Open a built project.

        Args:
            params: the project's `params.yaml`.
            overlay: a configuration over it (`configs/<name>.yaml`, a workspace's `config.yaml`).
            reconcile: finish or undo what a killed write left first; False looks at the graph as it is.
            llm: a reader already loaded (any object with its methods) instead of the configured one.

        Returns:
            The project, its models loaded on first use.

        Raises:
            ConfigError: a bad key or value in the configuration, named in one line.
        """
        return cls(load_config(params, overlay), params, overlay, reconcile, llm)

    @classmethod
    def from_folder(
        cls, folder: Path | str, workspace: Path | str | None = None, params: Path | str = "params.yaml", llm: LLM | None = None
    ) -> EnrichRAG:
        """Build (or reuse) a workspace for a folder of .txt, .md, .rst, .html, .docx, .pdf and
        .jsonl files, and open it.

        Args:
            folder: the folder of documents.
            workspace: where the workspace goes; None: `workspaces/<folder name>`.
            params: the `params.yaml` the workspace starts from.
            llm: a reader already loaded instead of the configured one.

        Returns:
            The project over that folder.

        Raises:
            InputDataError: no such folder, or no readable documents in it.
        """
        from enrich_rag.stages.folder import build_folder

        overlay = build_folder(folder, workspace, params)
        return cls.open(params, overlay, llm=llm)

    @overload
    def ask(
        self,
        question: str,
        *,
        enrich: str | None = ...,
        abstain: bool | None = ...,
        stream: Literal[False] = ...,
        time_limit_s: float | None = ...,
        settings: Settings | None = ...,
        hooks: Hooks | None = ...,
    ) -> Answer: ...
    @overload
    def ask(
        self,
        question: str,
        *,
        enrich: str | None = ...,
        abstain: bool | None = ...,
        stream: Literal[True],
        time_limit_s: float | None = ...,
        settings: Settings | None = ...,
    ) -> Generator[dict[str, Any], None, None]: ...

    def ask(
        self,
        question: str,
        *,
        enrich: str | None = None,
        abstain: bool | None = None,
        stream: bool = False,
        time_limit_s: float | None = None,
        settings: Settings | None = None,
        hooks: Hooks | None = None,
    ) -> Answer | Generator[dict[str, Any], None, None]:
        """Answer a question from the project's documents: the one way every caller asks (the CLI, the
        server, MCP, the evaluation, the benchmarks).

        Args:
            question: the question (at most 2,000 characters of text).
            enrich: "never" never writes; "background" queues an unsure answer's enrichment
                (`enrich_pending` or the server runs it) and answers at once; "now" waits for it and reads
                again; None does what `agent.allow_enrich` and `agent.enrich_when` say.
            abstain: an answer still unsure says it was not found (None: `agent.abstain`).
            stream: yield the question's events as they happen (`agent/stream.py`: a `step` event per
                step, then `answer` with the whole answer as JSON); closing the iterator stops the
                question before its next step.
            time_limit_s: `serve.answer_margin_s` before it the question answers with its best read so far
                (`Answer.spent`); it stops before its next step past it (QueryStopped), and starts no
                enrichment round that `serve.enrich_reserve_s` says cannot fit.
            settings: agent and evidence settings other than the project's (an evaluation method, the
                page's saved settings).
            hooks: a caller's own stop, enrichment and step callbacks (the server's: a client gone, its
                reader line, its event loop).

        Returns:
            The Answer (its text, citations, the quote that states it, perplexity, whether the loop is
            sure, and the trace), or with `stream=True` a generator of event dicts.

        Raises:
            QueryError: the question is empty, binary or too long, or `enrich` is not one of the above.
            QueryStopped: the time limit passed or a hook asked it to stop.
        """
        agent = self.agent(*(settings or (None, None)))
        limited = hooks or Hooks()
        if time_limit_s is not None:
            limited = limited.within(time_limit_s, self.config.serve.enrich_reserve_s, self.config.serve.answer_margin_s)
        if not stream:
            return agent.answer(question, enrich=enrich, abstain=abstain, hooks=limited)
        validate_question(question)  # a bad question fails here, not on the first `next`
        return streamed(
            lambda on_step, closed: agent.answer(
                question, enrich=enrich, abstain=abstain, hooks=dataclasses.replace(limited.or_stop(closed), on_step=on_step)
            ).to_dict()
        )

    def enrich(self, question: str) -> EnrichResult:
        """One EnrichGraph round for what a question needs, now.

        Args:
            question: the question whose gaps are read.

        Returns:
            What the round searched, read and wrote (a new partition when it found anything).

        Raises:
            QueryError: the question is empty, binary or too long.
        """
        return self.agent().jobs.enrich(validate_question(question), [])

    def enrich_pending(self, limit: int = 0, kind: str | None = None) -> list[EnrichmentJob]:
        """Run the queued jobs, oldest first, one at a time; a job whose worker was killed is run
        again whole.

        Args:
            limit: at most this many; 0: all.
            kind: only "enrich" rounds or "learn" facts; None: both.

        Returns:
            Each job run, as it ended.
        """
        return self.resources.jobs.run_pending(self.agent().jobs.run, limit, kind)

    def jobs(self) -> list[EnrichmentJob]:
        """The enrichment queue (a job whose worker died is put back first).

        Returns:
            Pending, running, done and failed jobs, oldest first.
        """
        self.resources.jobs.requeue_stale()
        return self.resources.jobs.jobs()

    def add(self, *paths: Path | str) -> CorpusUpdate:
        """Add new or changed documents to the corpus and graph; unchanged ones are skipped.

        Args:
            paths: files or folders.

        Returns:
            What was added, changed and skipped, and the partition written.

        Raises:
            InputDataError: a path does not exist or holds no readable document.
        """
        from enrich_rag.stages.corpus_update import read_documents

        return self._add(read_documents(list(paths), self.config.corpus.format, self.config.corpus.source))

    def add_text(self, text: str, doc_id: str = "", title: str = "") -> CorpusUpdate:
        """Add a string as a document (markdown headings make its sections).

        Args:
            text: the document's text.
            doc_id: its id; empty: the text's hash (the same text twice is one document). New text under
                an existing id replaces the old.
            title: its title; empty: its first `#` heading, else its first line.

        Returns:
            What was added or changed, and the partition written.

        Raises:
            InputDataError: the text is empty or binary.
        """
        from enrich_rag.ingest.documents import text_document

        return self._add([text_document(text, doc_id, title)])

    def _add(self, docs: list[Document]) -> CorpusUpdate:
        from enrich_rag.stages.corpus_update import add_documents

        resources = self.resources
        return add_documents(self.config, resources.passages, resources.writer, extractor=lambda: resources.seed_extractor, docs=docs)

    def passage(self, chunk_id: str) -> Passage | None:
        """One chunk by its id (what a citation points at).

        Args:
            chunk_id: the chunk's id.

        Returns:
            The passage, or None when no live chunk has that id.
        """
        return self.resources.passages.get(chunk_id)

    def documents(self) -> list[DocumentEntry]:
        """Every document the corpus has held.

        Returns:
            Each document's id, title, live chunks, source, and whether it was built, added or removed.
        """
        return self.resources.passages.documents()

    def search(self, query: str, k: int = 5, graph: bool = True) -> list[Passage]:
        """Passages with scores and no reader (bring your own): the hybrid's first passages, then
        GraphRank's order.

        Args:
            query: what to search for.
            k: how many passages, 1 to 100.
            graph: False: the hybrid search (dense + BM25) alone.

        Returns:
            The passages, best first, each with its score.

        Raises:
            EnrichRagError: `k` out of range; QueryError: the query is empty, binary or too long.
        """
        if not 1 <= k <= MAX_SEARCH_K:
            raise EnrichRagError(f"k must be between 1 and {MAX_SEARCH_K}, got {k}")
        return self.agent().retriever.retrieve(query, k, graph)

    def remove(self, *doc_ids: str) -> CorpusUpdate:
        """Remove documents: their passages, facts and links are no longer read or cited.

        Args:
            doc_ids: the documents' ids, as `documents()` lists them.

        Returns:
            What was removed and the partition written (`graph.rollback` brings them back).

        Raises:
            InputDataError: an id is not in the corpus.
        """
        from enrich_rag.stages.corpus_update import remove_documents

        return remove_documents(self.resources.passages, self.resources.writer, list(doc_ids))

    def close(self) -> None:
        """Close the stores and let the models go (also on leaving a `with` block)."""
        self.resources.close()

    def __enter__(self) -> EnrichRAG:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_workspaces(params: Path | str, overlays: Mapping[str, Path | str | None]) -> dict[str, EnrichRAG]:
    """Open several built folders in one process (a server's workspaces): each its own project
    (graph, indexes, jobs), all sharing the first one's reader (the reader is most of a process's memory).

    Args:
        params: the `params.yaml` every workspace starts from.
        overlays: each workspace's name and its `config.yaml`.

    Returns:
        The projects by name, in the order given.

    Raises:
        ConfigError: a bad key or value in a workspace's configuration.
    """
    opened: dict[str, EnrichRAG] = {}
    for name, overlay in overlays.items():
        shared = next(iter(opened.values())).resources.llm if opened else None
        opened[name] = EnrichRAG(load_config(params, overlay), params, overlay, llm=shared)
    return opened
