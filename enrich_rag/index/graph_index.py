"""The txtai index over graph nodes and edges; ids are the Parquet row ids.

Built once from the seed partition and then grown with `upsert` one partition at a time, so an
enrichment never rebuilds the index.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from enrich_rag.config import EmbeddingsConfig
from enrich_rag.index.embeddings import build_index, save_index, search
from enrich_rag.storage.graph_store import GraphStore


def partition_documents(store: GraphStore, partition: str) -> list[dict[str, Any]]:
    nodes, edges = store.partition_rows(partition)
    docs: list[dict[str, Any]] = [
        {"id": n["id"], "text": f"{n['name']}. {n['description']}".strip(), "kind": "node", "name": n["name"], "partition": partition}
        for n in nodes
    ]
    docs += [
        {"id": e["id"], "text": f"{e['src_name']} {e['relation']} {e['dst_name']}", "kind": "edge", "partition": partition}
        for e in edges
    ]
    return docs


def build_graph_index(store: GraphStore, config: EmbeddingsConfig, path: Path | str):
    docs = [doc for partition in store.partitions for doc in partition_documents(store, partition)]
    return build_index(docs, len(docs), config, path, "graph index")


def upsert_partition(embeddings, store: GraphStore, partition: str, path: Path | str) -> int:
    docs = partition_documents(store, partition)
    if docs:
        embeddings.upsert(docs)
        save_index(embeddings, path)
    return len(docs)


def search_graph(embeddings, query: str, limit: int, config: EmbeddingsConfig) -> list[dict[str, Any]]:
    return search(embeddings, query, limit, config, columns=("text", "kind", "partition"))

