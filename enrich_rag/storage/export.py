"""The graph, or one answer's evidence subgraph, as a networkx graph and a GraphML file for analysis
(Gephi, Cytoscape, networkx). A version is the seed plus the enrichment partitions up to one of them,
so the graph as it stood before an enrichment can be compared with the graph after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from enrich_rag.errors import StorageError
from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.partitions import committed_partitions

EDGE_ATTRIBUTES = ("id", "relation", "evidence", "chunk_id", "doc_id", "confidence", "extractor", "partition")


def _plain(value: Any) -> Any:
    """GraphML holds strings, numbers and booleans; lists become '; '-joined strings, None is left out."""
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value)
    return value


def _attributes(row: dict[str, Any], keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    return {k: _plain(v) for k, v in row.items() if v is not None and (keys is None or k in keys)}


def version_partitions(root: Path | str, upto: str | None) -> list[str]:
    """The committed partitions of the version ending at `upto` (all of them when None)."""
    partitions = committed_partitions(root)
    if upto is None:
        return partitions
    if upto not in partitions:
        raise StorageError(f"no partition '{upto}' (see `enrich-rag graph partitions`)")
    return partitions[: partitions.index(upto) + 1]


def graph_to_networkx(store: GraphStore, partitions: list[str]):
    """Entities as nodes, facts as directed edges (one per fact: a MultiDiGraph)."""
    import networkx as nx

    nodes, edges = store.rows_of(partitions)
    graph = nx.MultiDiGraph(partitions="; ".join(partitions))
    for row in nodes:
        graph.add_node(row["id"], **_attributes({k: v for k, v in row.items() if k != "id"}))
    for row in edges:
        graph.add_edge(row["src"], row["dst"], key=row["id"], **_attributes(row, EDGE_ATTRIBUTES))
    return graph


def subgraph_to_networkx(subgraph: dict[str, Any]):
    """An answer's evidence subgraph (`Answer.subgraph`: what the page draws); nodes the reader read
    as context are marked `context`."""
    import networkx as nx

    context = {f"p:{c}" for c in subgraph.get("context", [])}
    graph = nx.MultiDiGraph()
    for node in subgraph.get("nodes", []):
        graph.add_node(node["id"], **_attributes({k: v for k, v in node.items() if k != "id"}), context=node["id"] in context)
    for edge in subgraph.get("edges", []):
        graph.add_edge(edge["src"], edge["dst"], **_attributes({k: v for k, v in edge.items() if k not in ("src", "dst")}))
    return graph


def write_graphml(graph, path: Path | str) -> Path:
    import networkx as nx

    path = Path(path)
    with atomic_file(path) as tmp:
        nx.write_graphml(graph, tmp)
    return path
