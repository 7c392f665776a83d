"""Stages `build_corpus_index` and `build_graph_index`."""

from __future__ import annotations

from enrich_rag.config import Config
from enrich_rag.index.embeddings import build_index, dir_size
from enrich_rag.index.graph_index import build_graph_index as _build_graph_index
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.passages import read_passages


def corpus_documents(config: Config) -> list[dict]:
    return [{"id": p.id, "text": p.content, "title": p.title, "doc_id": p.doc_id} for p in read_passages(config.paths.chunks)]


def build_corpus_index(config: Config) -> dict[str, int]:
    docs = corpus_documents(config)
    build_index(docs, config.embeddings, config.paths.corpus_index, "corpus index")
    return {"documents": len(docs), "bytes": dir_size(config.paths.corpus_index)}


def build_graph_index(config: Config) -> dict[str, int]:
    with GraphStore(config.paths.graph) as store:
        embeddings = _build_graph_index(store, config.embeddings, config.paths.graph_index)
    return {"documents": embeddings.count(), "bytes": dir_size(config.paths.graph_index)}
