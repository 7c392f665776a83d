"""The txtai index over graph nodes and edges; ids are the Parquet row ids.

Built once from the seed partition and then grown with `upsert` one partition at a time (through
`storage.graph_writer`), so an enrichment never rebuilds the index. It holds the entry points of
EnrichContext: every node, and every edge that names a relation (`GraphStore.index_documents`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from enrich_rag.config import EmbeddingsConfig
from enrich_rag.index.embeddings import build_index, search
from enrich_rag.storage.graph_store import GraphStore


def graph_documents(store: GraphStore) -> list[dict[str, Any]]:
    return [doc for partition in store.partitions for doc in store.index_documents(partition)]


def build_graph_index(docs: list[dict[str, Any]], config: EmbeddingsConfig, path: Path | str, vectors: Any = None):
    return build_index(docs, config, path, label="graph index", vectors=vectors)


def search_graph(embeddings, query: str, limit: int, config: EmbeddingsConfig) -> list[dict[str, Any]]:
    return search(embeddings, query, limit, config=config, columns=("text", "kind", "partition"))
