"""Stages `build_corpus_index` and `build_graph_index`."""

from __future__ import annotations

from enrich_rag.build.corpus import read_chunks
from enrich_rag.config import Config
from enrich_rag.index.embeddings import build_index, dir_size
from enrich_rag.index.graph_index import build_graph_index as _build_graph_index
from enrich_rag.storage.graph_store import GraphStore


def corpus_documents(config: Config) -> list[dict]:
    # The title goes into the indexed text as DPR does: many passages never repeat their subject.
    return [
        {"id": r["chunk_id"], "text": f"{r['title']}: {r['text']}" if r["title"] else r["text"], "title": r["title"], "doc_id": r["doc_id"]}
        for r in read_chunks(config.paths.chunks).to_pylist()
    ]


def build_corpus_index(config: Config) -> dict[str, int]:
    docs = corpus_documents(config)
    build_index(docs, config.embeddings, config.paths.corpus_index, "corpus index")
    return {"documents": len(docs), "bytes": dir_size(config.paths.corpus_index)}


def build_graph_index(config: Config) -> dict[str, int]:
    with GraphStore(config.paths.graph) as store:
        embeddings = _build_graph_index(store, config.embeddings, config.paths.graph_index)
    return {"documents": embeddings.count(), "bytes": dir_size(config.paths.graph_index)}
