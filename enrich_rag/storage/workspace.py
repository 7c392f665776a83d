"""Private copies of a built dataset for runs that write to it (evaluation, benchmarks, fault injection).

The dataset's build stays as DVC produced it, so every method reads the same seed and reruns are
reproducible; a copy grows over a run, has its own DVC repository, and survives an interruption.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pyarrow.parquet as pq

from enrich_rag.config import Config
from enrich_rag.storage.atomic import atomic_directory, save_index
from enrich_rag.storage.dvc_tracking import DvcRepo
from enrich_rag.storage.graph_writer import GraphWriter
from enrich_rag.storage.partitions import PART_FILE, TABLES, partition_dir, write_partition
from enrich_rag.storage.schema import SEED_PARTITION


def writable_copy(config: Config, root: Path | str, with_corpus: bool = False) -> Config:
    """Copy graph + graph index (and with `with_corpus` the chunks and corpus index) under `root` once,
    with a DVC repository of its own; an existing copy is reused as it is."""
    root = Path(root)
    if not (root / "graph_index").is_dir():
        with atomic_directory(root) as tmp:
            shutil.copytree(config.paths.graph, tmp / "graph", ignore=shutil.ignore_patterns(".*"))
            shutil.copytree(config.paths.graph_index, tmp / "graph_index")
            if with_corpus:
                shutil.copytree(config.paths.corpus_index, tmp / "corpus_index")
                shutil.copy(config.paths.chunks, tmp / "chunks.parquet")
            DvcRepo(tmp).init()
    paths = dataclasses.replace(config.paths, graph=str(root / "graph"), graph_index=str(root / "graph_index"), dvc_root=str(root))
    if with_corpus:
        paths = dataclasses.replace(paths, corpus_index=str(root / "corpus_index"), chunks=str(root / "chunks.parquet"))
    return dataclasses.replace(config, paths=paths)


def remove_seed_facts(writer: GraphWriter, chunk_ids: set[str]) -> int:
    """Make a gap on purpose: drop every seed edge extracted from these chunks, from Parquet and index.

    For benchmarks and tests of enrichment on a copy; the seed is a build output, never edited in place.
    """
    with writer.lock:
        nodes, edges, links = (pq.read_table(partition_dir(writer.root, t, SEED_PARTITION) / PART_FILE) for t in TABLES)
        keep = [c not in chunk_ids for c in edges.column("chunk_id").to_pylist()]
        dropped = [i for i, k in zip(edges.column("id").to_pylist(), keep) if not k]
        # The chunks' mention links go with their facts; title links need no extraction and stay.
        links = links.filter(
            [t or c not in chunk_ids for c, t in zip(links.column("chunk_id").to_pylist(), links.column("is_title").to_pylist())]
        )
        write_partition(writer.root, SEED_PARTITION, nodes, edges=edges.filter(keep), links=links)
        writer.index.delete(dropped)
        save_index(writer.index, writer.index_path)
    return len(dropped)
