"""Stages `build_corpus_index` and `build_graph_index`; with `build.engine: ray` the vectors are
computed on Ray actors and txtai indexes them as it would its own."""

from __future__ import annotations

from typing import Any

from enrich_rag.config import Config
from enrich_rag.index.embeddings import build_index, dir_size
from enrich_rag.index.graph_index import build_graph_index as _build_graph_index
from enrich_rag.index.graph_index import graph_documents
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.passages import read_passages


def corpus_documents(config: Config) -> list[dict]:
    return [p.index_row() for p in read_passages(config.paths.chunks)]


def precomputed_vectors(config: Config, docs: list[dict]) -> Any:
    """None for the local engine: txtai encodes while it indexes."""
    if config.build.engine != "ray":
        return None
    from enrich_rag.stages.ray_engine import embed_on_ray

    return embed_on_ray(config, [d["text"] for d in docs])


def build_corpus_index(config: Config) -> dict[str, int]:
    docs = corpus_documents(config)
    build_index(docs, config.embeddings, config.paths.corpus_index, label="corpus index", vectors=precomputed_vectors(config, docs))
    return {"documents": len(docs), "bytes": dir_size(config.paths.corpus_index)}


def build_graph_index(config: Config) -> dict[str, int]:
    with GraphStore(config.paths.graph) as store:
        docs = graph_documents(store)
    embeddings = _build_graph_index(docs, config.embeddings, config.paths.graph_index, precomputed_vectors(config, docs))
    return {"documents": embeddings.count(), "bytes": dir_size(config.paths.graph_index)}
