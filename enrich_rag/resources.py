"""What the agent keeps open between questions: graph store, passages, both indexes, LLM, extractor, writer.
It opens and loads; writes go through the writer, called by the jobs (agent/enrich_graph.py) and the door (api.py).

Models load lazily (the first question pays, later ones do not) and only what a path needs: a
`--no-enrich` question never loads the extractor. Loading is thread-safe: the web server answers
on a thread pool, and two first requests must not load a model twice. The tools get the typed
pieces they use, never this bag.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from enrich_rag.config import Config, EvidenceConfig
from enrich_rag.extract.base import Extractor
from enrich_rag.index.embeddings import QueryVectors, open_index
from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import answer_prompt, plan_prompt
from enrich_rag.storage.corpus_changes import CorpusSync
from enrich_rag.storage.dvc_tracking import DvcRepo
from enrich_rag.storage.enrichment_jobs import JobQueue, jobs_folder
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.graph_writer import GraphWriter
from enrich_rag.storage.passages import PassageStore
from enrich_rag.storage.saved_index import SavedIndex

if TYPE_CHECKING:
    from enrich_rag.extract.title_links import TitleGazetteer

MAX_RERANKERS = 4


class Resources:
    def __init__(self, config: Config, llm: LLM | None = None, extractor: Extractor | None = None, seed_extractor: Extractor | None = None):
        """`llm`, `extractor`, `seed_extractor`: already loaded ones to use instead of loading the configured."""
        self.config = config
        self._loaded: dict[str, Any] = {}
        if llm is not None:
            self._loaded["llm"] = llm
        if seed_extractor is not None:
            self._loaded["seed_extractor"] = seed_extractor
        self._given_extractor = extractor
        self._idle: Callable[[], bool] | None = None  # a server's reader line: no question waits or runs
        self._lock = threading.RLock()
        self.store = GraphStore(config.paths.graph)
        self.passages = PassageStore(config.paths.chunks, config.paths.graph)
        self.query_vectors = QueryVectors()  # both indexes embed with one model: a query is encoded once
        corpus = CorpusSync(
            Path(config.paths.chunks),
            Path(config.paths.graph),
            SavedIndex(config.paths.corpus_index, lambda: open_index(config.paths.corpus_index, config.embeddings, self.query_vectors)),
            passages=self.passages.by_ids,
        )
        self.writer = GraphWriter(
            config.paths.graph,
            config.paths.graph_index,
            self.store,
            dvc=DvcRepo(config.paths.dvc_root),
            open_index=lambda: open_index(config.paths.graph_index, config.embeddings, self.query_vectors),
            compact_after=config.storage.compact_after,
            corpus=corpus,
        )
        self.jobs = JobQueue(jobs_folder(config.paths.graph))  # enrichments queued to run after their answers

    def _get(self, name: str, load: Callable[[], Any]) -> Any:
        if name not in self._loaded:
            with self._lock:
                if name not in self._loaded:
                    self._loaded[name] = load()
        return self._loaded[name]

    @property
    def graph_index(self):
        return self.writer.index

    @property
    def corpus_index(self):
        """The writer's copy: documents added in this process are found at once."""
        assert self.writer.corpus is not None
        return self.writer.corpus.index.get()

    @property
    def llm(self) -> LLM:
        from enrich_rag.llm.factory import make_llm

        return self._get("llm", lambda: self._reader(make_llm(self.config.llm)))

    def questions_first(self, idle: Callable[[], bool]) -> None:
        """A server's reader: what its enrichment worker's thread asks of it waits while a question waits or
        runs (`llm/priority.py`). `idle`: no question waits or runs."""
        self._idle = idle
        with self._lock:
            if "llm" in self._loaded:
                self._loaded["llm"] = self._reader(self._loaded["llm"])

    def _reader(self, llm: LLM) -> LLM:
        from enrich_rag.llm.priority import QuestionsFirst

        return llm if self._idle is None or isinstance(llm, QuestionsFirst) else QuestionsFirst(llm, self._idle)

    @property
    def extractor(self) -> Extractor:
        from enrich_rag.extract.factory import make_extractor

        def load() -> Extractor:
            from enrich_rag.llm.prompts import fact_prompt

            extractor = self._given_extractor or make_extractor(
                self.config.extraction, self.config.extraction.deep, lambda: self.llm, prompt=fact_prompt
            )
            if not self.config.extraction.title_links:
                return extractor
            from enrich_rag.extract.title_links import TitleLinkingExtractor

            return TitleLinkingExtractor(extractor, self.title_gazetteer())

        return self._get("extractor", load)

    def title_gazetteer(self) -> TitleGazetteer:
        """The corpus's page titles, for naming pages at question time; built again when they change."""
        from enrich_rag.extract.title_links import TitleGazetteer

        signature = self.passages.signature()
        cached = self._loaded.get("title_gazetteer")
        if cached is None or cached[0] != signature:
            titles = self.passages.titles()
            with self._lock:
                self._loaded["title_gazetteer"] = cached = (signature, TitleGazetteer(titles))
        return cached[1]

    @property
    def seed_extractor(self) -> Extractor:
        """The build's extractor (`extraction.extractor`): what `enrich-rag add` reads new documents with."""
        from enrich_rag.extract.factory import make_extractor

        return self._get("seed_extractor", lambda: make_extractor(self.config.extraction))

    @property
    def nlp(self):
        """spaCy for query analysis; shared with the extractor when that is spaCy and already loaded."""

        def load():
            extractor = self._loaded.get("extractor") or self._given_extractor
            if extractor is not None and hasattr(extractor, "nlp"):
                return extractor.nlp
            from enrich_rag.extract.spacy_extractor import load_spacy

            return load_spacy(self.config.extraction.spacy_model)

        return self._get("nlp", load)

    def reranker(self, evidence: EvidenceConfig):
        def load():  # weights are part of the entity reranker, so one per evidence config
            from enrich_rag.evidence.rerank import make_reranker
            from enrich_rag.evidence.select import entity_ranker

            return make_reranker(evidence.rerank, entity_ranker(evidence), lambda: self.llm)

        key = f"reranker:{evidence!r}"
        with self._lock:  # one per evidence config, the last few: web settings may change it on every question
            others = [k for k in self._loaded if k.startswith("reranker:") and k != key]  # oldest first
            for old in others[: max(0, len(others) - (MAX_RERANKERS - 1))]:
                del self._loaded[old]
        return self._get(key, load)

    def retrieval(self):
        from enrich_rag.evidence.fusion import dense_weight
        from enrich_rag.evidence.select import corpus_retrieval

        def load():
            weight = dense_weight(self.config, self.corpus_kind)
            return corpus_retrieval(
                self.config, self.corpus_index, self.passages, store=self.store, graph_index=self.graph_index, dense_weight=weight
            )

        return self._get("retrieval", load)

    @property
    def corpus_kind(self) -> str:
        """Documentation pages or titled passages (evidence/fusion.py), read once from the corpus."""
        from enrich_rag.evidence.fusion import corpus_kind

        return self._get("corpus_kind", lambda: corpus_kind(self.passages.sectioned_share()))

    def loaded(self) -> set[str]:
        """What is loaded now: `llm`, `nlp`, `retrieval`, `extractor`, `seed_extractor`, `reranker:...`."""
        return set(self._loaded)

    def warm(self, enrich: bool) -> None:
        """Load now what a question will load: a server does this before it takes questions, so the
        first one does not spend its time limit on loading models."""
        loaded = [self.retrieval(), self.graph_index, self.nlp, self.llm]
        if enrich:
            loaded.append(self.extractor)

    def warm_prompts(self) -> None:
        """The reader's stable prompt heads (rules and examples of a plan and of a read), computed once:
        llama.cpp keeps them in its prompt cache, and the first plan or read of a question then computes
        only its own part, as every later one does."""
        for head in (plan_prompt(""), answer_prompt("", [])):
            self.llm.generate(head, max_new_tokens=1)

    def close(self) -> None:
        self.store.close()
        self.passages.close()
