"""What the offline build produced, as a table for people and JSON for `dvc metrics`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc
from rich.table import Table

from enrich_rag.config import Config
from enrich_rag.index.embeddings import dir_size
from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.passages import read_chunks


def build_summary(config: Config, counts: dict) -> dict:
    """`counts`: the graph's, as the project's door gives them (`EnrichRAG.graph.stats()`)."""
    chunks = read_chunks(config.paths.chunks)
    summary = {
        "passages": len(pc.unique(chunks["doc_id"])),
        "chunks": chunks.num_rows,
        "nodes": counts["nodes"],
        "edges": counts["edges"],
        "partitions": len(counts["partitions"]),
        "graph_bytes": dir_size(config.paths.graph),
        "corpus_index_bytes": dir_size(config.paths.corpus_index),
        "graph_index_bytes": dir_size(config.paths.graph_index),
    }
    with atomic_file(config.paths.build_summary) as tmp:
        Path(tmp).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def summary_table(summary: dict) -> Table:
    table = Table(title="EnrichRAG offline build")
    table.add_column("what")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        shown = f"{value / 1e6:,.1f} MB" if key.endswith("_bytes") else f"{value:,}"
        table.add_row(key.replace("_bytes", " size").replace("_", " "), shown)
    return table
