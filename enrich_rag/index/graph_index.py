"""The txtai index over graph nodes and edges; ids are the Parquet row ids.

Built once from the seed partition and then grown with `upsert` one partition at a time, so an
enrichment never rebuilds the index. It holds the entry points of EnrichContext: every node, and
every edge that names a relation. Structural edges ("co-occurs with", "mentions") carry no text
beyond their two end names, which the node entries already cover; they are three quarters of all
edges, so they stay in Parquet, where the DuckDB 1-hop step reaches them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from enrich_rag.config import EmbeddingsConfig
from enrich_rag.index.embeddings import build_index, save_index, search
from enrich_rag.extract.spacy_extractor import COOCCURS, MENTIONS
from enrich_rag.storage.graph_store import GraphStore

STRUCTURAL_RELATIONS = (COOCCURS, MENTIONS)
# Names carry the match; a short description disambiguates (and long texts cost embedding time).
NODE_DESCRIPTION_CHARS = 100


def partition_documents(store: GraphStore, partition: str) -> list[dict[str, Any]]:
    nodes, edges = store.partition_rows(partition)
    docs: list[dict[str, Any]] = [
        {"id": n["id"], "text": f"{n['name']}. {n['description'][:NODE_DESCRIPTION_CHARS]}".strip(), "kind": "node", "name": n["name"], "partition": partition}
        for n in nodes
    ]
    docs += [
        {"id": e["id"], "text": f"{e['src_name']} {e['relation']} {e['dst_name']}", "kind": "edge", "partition": partition}
        for e in edges
        if e["relation"] not in STRUCTURAL_RELATIONS
    ]
    return docs


def build_graph_index(store: GraphStore, config: EmbeddingsConfig, path: Path | str):
    docs = [doc for partition in store.partitions for doc in partition_documents(store, partition)]
    return build_index(docs, config, path, "graph index")


def upsert_partition(embeddings, store: GraphStore, partition: str, path: Path | str) -> int:
    docs = partition_documents(store, partition)
    if docs:
        embeddings.upsert(docs)
        save_index(embeddings, path)
    return len(docs)


def search_graph(embeddings, query: str, limit: int, config: EmbeddingsConfig) -> list[dict[str, Any]]:
    return search(embeddings, query, limit, config, columns=("text", "kind", "partition"))

