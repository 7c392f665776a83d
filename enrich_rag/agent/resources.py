"""What the agent keeps open between questions: graph store, both indexes, LLM, extractor, DVC.

Models load lazily (the first question pays, later ones do not) and only what a path needs: a
`--no-enrich` question never loads the extractor.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from filelock import FileLock

from enrich_rag.config import Config, EvidenceConfig
from enrich_rag.extract.base import Extractor
from enrich_rag.index.embeddings import open_index
from enrich_rag.llm.base import LLM
from enrich_rag.storage.dvc_tracking import DvcRepo
from enrich_rag.storage.graph_store import GraphStore

WRITE_LOCK = ".enrich.lock"


class Resources:
    def __init__(self, config: Config, llm: LLM | None = None, extractor: Extractor | None = None):
        self.config = config
        self._llm, self._extractor = llm, extractor
        self._rerankers: dict[EvidenceConfig, object] = {}
        self.store = GraphStore(config.paths.graph)
        self.dvc = DvcRepo(config.paths.dvc_root)
        Path(config.paths.graph).mkdir(parents=True, exist_ok=True)
        # One reentrant lock object: recovery may run inside a rollback that already holds it.
        self._write_lock = FileLock(str(Path(config.paths.graph) / WRITE_LOCK))

    @cached_property
    def graph_index(self):
        return open_index(self.config.paths.graph_index, self.config.embeddings)

    @cached_property
    def corpus_index(self):
        return open_index(self.config.paths.corpus_index, self.config.embeddings)

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            from enrich_rag.llm.factory import make_llm

            self._llm = make_llm(self.config.llm)
        return self._llm

    @property
    def extractor(self) -> Extractor:
        if self._extractor is None:
            from enrich_rag.extract.factory import make_extractor

            self._extractor = make_extractor(self.config.extraction)
        return self._extractor

    @cached_property
    def nlp(self):
        """spaCy for query analysis; shared with the extractor when that is spaCy."""
        if self._extractor is not None and hasattr(self._extractor, "nlp"):
            return self._extractor.nlp
        from enrich_rag.extract.spacy_extractor import load_spacy

        return load_spacy(self.config.extraction.spacy_model)

    def reranker(self, evidence: EvidenceConfig):
        if evidence not in self._rerankers:  # weights are part of the entity reranker
            from enrich_rag.evidence.entity_ranker import EntityFirstRanker
            from enrich_rag.evidence.rerank import make_reranker

            ranker = EntityFirstRanker(evidence.replacement_threshold, evidence.coverage_weight,
                                       evidence.salience_weight, evidence.retrieval_weight)
            self._rerankers[evidence] = make_reranker(evidence.rerank, ranker, lambda: self.llm)
        return self._rerankers[evidence]

    def retrieval(self):
        from enrich_rag.evidence.select import corpus_retrieval

        return corpus_retrieval(self.config, self.corpus_index, self.store, self.graph_index)

    def partitions(self) -> list[dict]:
        """Committed partitions with counts and how DVC versions each (seed: stage output)."""
        from enrich_rag.storage.partitions import partition_dir

        rows = self.store.counts()["partitions"]
        for row in rows:
            row["dvc"] = "stage output" if row["partition"] == "seed" else (
                "dvc add" if self.dvc.is_tracked(partition_dir(Path(self.config.paths.graph), "nodes", row["partition"])) else "untracked")
        return rows

    def write_lock(self) -> FileLock:
        """Enrichments, rollbacks and repairs serialise on one lock file beside the graph."""
        return self._write_lock

    def after_partition_write(self, partition: str) -> None:
        """Called between the partition commit and the index upsert; tests inject crashes here."""

    def reload_graph_index(self) -> None:
        self.__dict__.pop("graph_index", None)

    def close(self) -> None:
        self.store.close()
