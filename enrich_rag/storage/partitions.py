"""Hive-partitioned graph layout: graph/{nodes,edges,links}/partition=<id>/part-0.parquet.

A partition is written whole into staging folders, then its edges and links folders and finally its
nodes folder are renamed into place. The nodes folder is the commit point: readers list partitions
by their nodes folder, so edges or links without nodes (a crash between the renames) are never read
and are removed by `remove_uncommitted`. A graph at an object-store URI (a cluster build) keeps the
same protocol with one object per folder (storage/uris.py).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from enrich_rag.storage.atomic import _fsync_dir, staging_path, write_parquet_atomic
from enrich_rag.storage.schema import CHUNKS, EDGES, LINKS, NODES, check_partition_id
from enrich_rag.storage.uris import exists, is_uri, listing, open_uri

PART_FILE = "part-0.parquet"
TABLES = ("nodes", "edges", "links")
# A partition written by `enrich-rag add` / `remove` also carries a chunks table: the chunks of the
# documents it adds, and in its footer the chunk ids it removes (a tombstone). Others have none.
CHUNKS_TABLE = "chunks"
ALL_TABLES = (*TABLES, CHUNKS_TABLE)
# Written in this order: nodes, the commit point, last; removed in the reverse order.
_WRITE_ORDER = ("edges", "links", CHUNKS_TABLE, "nodes")
# Edges are sorted by source id and cut into small row groups so that min/max statistics let
# DuckDB skip most of the file for a 1-hop lookup.
EDGE_ROW_GROUP = 16_384
# Key of the nodes file's Parquet metadata that lists the chunks a deep extractor read for this
# partition, facts or none: a chunk that held nothing is not read again by the next question.
READS_KEY = b"enrich_rag.reads"
# Key of a compacted partition's nodes metadata: the partitions it replaces. Its nodes rename is the
# commit point of the compaction too: from then on readers list it and no longer the ones it replaces.
REPLACES_KEY = b"enrich_rag.replaces"
# Key of a chunks file's metadata: the chunk ids this partition removes from the corpus (documents
# removed or replaced by a new version); their facts, links and passages are hidden from then on.
REMOVES_KEY = b"enrich_rag.removes"
# Key of a nodes file's metadata: the edge ids this partition forgets (`enrich-rag graph forget`): a
# tombstone that hides one fact from then on, undone by rolling its partition back.
FORGETS_KEY = b"enrich_rag.forgets"
COMPACT_PREFIX = "compact-"
# Replaced (new inode) by every write and removal: with the nodes folder's own stat it tells a reader
# in two stat calls whether anything changed, instead of statting three files per partition per query.
VERSION_FILE = ".version"


@dataclass(frozen=True)
class GraphTables:
    """What one partition holds; `reads`: extractor -> the chunks it read (deep extraction)."""

    nodes: pa.Table
    edges: pa.Table
    links: pa.Table
    reads: dict[str, list[str]] = field(default_factory=dict)
    chunks: pa.Table | None = None  # the chunks of documents added (`enrich-rag add`)
    removes: tuple[str, ...] = ()  # chunk ids removed from the corpus
    forgets: tuple[str, ...] = ()  # edge ids hidden from then on (facts forgotten)

    @property
    def rows(self) -> int:
        return self.nodes.num_rows + self.edges.num_rows + self.links.num_rows + (self.chunks.num_rows if self.chunks else 0)

    @property
    def changes_corpus(self) -> bool:
        return self.chunks is not None or bool(self.removes)


def _footer(nodes_file: Path | str, key: bytes) -> Any:
    metadata = pq.read_schema(nodes_file).metadata or {}
    return json.loads(metadata[key]) if key in metadata else None


def partition_reads(nodes_file: Path | str) -> dict[str, list[str]]:
    """The `reads` a partition's nodes file carries (its footer only is read)."""
    return _footer(nodes_file, READS_KEY) or {}


def partition_forgets(nodes_file: Path | str) -> list[str]:
    """The edge ids a partition forgets (its footer only is read)."""
    return _footer(nodes_file, FORGETS_KEY) or []


def chunks_file(graph_root: Path | str, partition: str) -> Path | None:
    """The partition's chunks file, where it has one (partitions that add or remove documents)."""
    path = partition_dir(Path(graph_root), CHUNKS_TABLE, partition) / PART_FILE
    return path if path.is_file() else None


def partition_removes(path: Path | str) -> list[str]:
    """The chunk ids a chunks file removes (its footer only is read)."""
    return _footer(path, REMOVES_KEY) or []


def corpus_partitions(graph_root: Path | str) -> list[str]:
    """Committed partitions that add or remove documents, in write order."""
    folder = Path(graph_root) / CHUNKS_TABLE
    if is_uri(graph_root) or not folder.is_dir():
        return []
    return [p for p in committed_partitions(graph_root) if chunks_file(graph_root, p)]


def partition_replaces(graph_root: Path | str, partition: str) -> list[str]:
    """The partitions a compacted partition replaces (none for any other)."""
    if not partition.startswith(COMPACT_PREFIX):
        return []
    return _footer(partition_dir(Path(graph_root), "nodes", partition) / PART_FILE, REPLACES_KEY) or []


def _ordered(partitions: list[str]) -> list[str]:
    """The seed first, then compactions (the oldest rows), then enrichments in the order they were
    written (their ids sort by time)."""
    return sorted(partitions, key=lambda pid: (pid != "seed", pid))


def bump_version(graph_root: Path) -> None:
    target = Path(graph_root) / VERSION_FILE
    tmp = staging_path(target)
    tmp.write_text(uuid.uuid4().hex)
    os.replace(tmp, target)


def graph_version(graph_root: Path | str) -> tuple:
    """Changes whenever a partition is committed, replaced or removed (see VERSION_FILE)."""
    stamp: list[tuple[int, int] | None] = []
    for path in (Path(graph_root) / "nodes", Path(graph_root) / VERSION_FILE):
        try:
            stat = path.stat()
            stamp.append((stat.st_ino, stat.st_mtime_ns))
        except FileNotFoundError:
            stamp.append(None)
    return tuple(stamp)


def partition_dir(graph_root: Path, table: str, partition: str) -> Path:
    return Path(graph_root) / table / f"partition={check_partition_id(partition)}"


def committed_partitions(graph_root: Path | str) -> list[str]:
    if is_uri(graph_root):
        fs, root = open_uri(str(graph_root))
        found = [
            info.base_name.split("=", 1)[1]
            for info in listing(fs, f"{root}/nodes")
            if info.base_name.startswith("partition=") and exists(fs, f"{info.path}/{PART_FILE}")
        ]
        return _ordered(found)
    return _ordered(sorted(set(on_disk(graph_root)) - set(replaced_by(graph_root))))


def on_disk(graph_root: Path | str) -> list[str]:
    """Partitions with a nodes file, those a compaction replaced included (until it removes them)."""
    nodes_root = Path(graph_root) / "nodes"
    if not nodes_root.is_dir():
        return []
    return _ordered(
        [
            p.name.split("=", 1)[1]
            for p in nodes_root.iterdir()
            if p.is_dir() and p.name.startswith("partition=") and (p / PART_FILE).is_file()
        ]
    )


def replaced_by(graph_root: Path | str) -> dict[str, str]:
    """Replaced partition -> the live compaction that holds its rows now (through later compactions)."""
    found = on_disk(graph_root)
    direct = {old: p for p in found for old in partition_replaces(graph_root, p)}
    owners = {}
    for old in direct:
        owner = direct[old]
        while owner in direct:  # a compaction compacted again
            owner = direct[owner]
        owners[old] = owner
    return owners


def write_partition(
    graph_root: Path | str,
    partition: str,
    nodes: pa.Table,
    edges: pa.Table,
    links: pa.Table | None = None,
    reads: dict[str, list[str]] | None = None,
    replaces: list[str] | None = None,
    chunks: pa.Table | None = None,
    removes: list[str] | tuple[str, ...] = (),
    forgets: list[str] | tuple[str, ...] = (),
) -> None:
    nodes = nodes.cast(NODES).sort_by("id")
    metadata = {}
    if reads:
        metadata[READS_KEY] = json.dumps({k: sorted(v) for k, v in reads.items()})
    if forgets:
        metadata[FORGETS_KEY] = json.dumps(sorted(set(forgets)))
    if replaces:
        metadata[REPLACES_KEY] = json.dumps(list(replaces))
    if metadata:
        nodes = nodes.replace_schema_metadata(metadata)
    tables = {
        "nodes": (nodes, None),
        "edges": (edges.cast(EDGES).sort_by([("src", "ascending"), ("dst", "ascending")]), EDGE_ROW_GROUP),
        "links": ((links if links is not None else LINKS.empty_table()).cast(LINKS).sort_by("node"), EDGE_ROW_GROUP),
    }
    if chunks is not None or removes:
        corpus = (chunks if chunks is not None else CHUNKS.empty_table()).cast(CHUNKS).sort_by("chunk_id")
        if removes:
            corpus = corpus.replace_schema_metadata({REMOVES_KEY: json.dumps(sorted(set(removes)))})
        tables[CHUNKS_TABLE] = (corpus, None)
    if is_uri(graph_root):
        _write_partition_to_store(str(graph_root), check_partition_id(partition), tables)
        return
    graph_root = Path(graph_root)
    staged: list[tuple[Path, Path]] = []
    try:
        for name in [n for n in _WRITE_ORDER if n in tables]:
            table, group = tables[name]
            target = partition_dir(graph_root, name, partition)
            tmp = staging_path(target)
            tmp.mkdir(parents=True)
            write_parquet_atomic(table, tmp / PART_FILE, row_group_size=group)
            staged.append((tmp, target))
        for tmp, target in staged:  # nodes (the commit point) last
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmp, target)
            _fsync_dir(target.parent)
        bump_version(graph_root)
    finally:
        for tmp, _ in staged:
            if tmp.exists():
                shutil.rmtree(tmp)


def write_tables(graph_root: Path | str, partition: str, tables: GraphTables, replaces: list[str] | None = None) -> None:
    """`write_partition` of everything one partition's tables hold."""
    write_partition(
        graph_root,
        partition,
        tables.nodes,
        edges=tables.edges,
        links=tables.links,
        reads=tables.reads,
        replaces=replaces,
        chunks=tables.chunks,
        removes=tables.removes,
        forgets=tables.forgets,
    )


def _write_partition_to_store(uri: str, partition: str, tables: dict[str, tuple[pa.Table, int | None]]) -> None:
    """Each file is written under a hidden staging name, then moved to its partition folder, nodes
    last. On an object store a move of one object is whole or absent, which is all the commit needs."""
    fs, root = open_uri(uri)
    token = uuid.uuid4().hex[:8]
    staged: list[tuple[str, str]] = []
    try:
        for name in [n for n in _WRITE_ORDER if n in tables]:
            table, group = tables[name]
            fs.create_dir(f"{root}/{name}", recursive=True)
            tmp = f"{root}/{name}/.tmp-partition={partition}-{token}.parquet"
            pq.write_table(table, tmp, filesystem=fs, row_group_size=group)
            staged.append((tmp, f"{root}/{name}/partition={partition}/{PART_FILE}"))
        for tmp, target in staged:  # nodes (the commit point) last
            fs.create_dir(target.rsplit("/", 1)[0], recursive=True)
            fs.move(tmp, target)
    finally:
        for tmp, _ in staged:
            if exists(fs, tmp):
                fs.delete_file(tmp)


def remove_partition(graph_root: Path, partition: str) -> None:
    """Uncommit first (nodes), then drop edges and links: a crash in between leaves only orphans."""
    for table in reversed(_WRITE_ORDER):
        target = partition_dir(graph_root, table, partition)
        if target.exists():
            doomed = staging_path(target)
            os.replace(target, doomed)
            shutil.rmtree(doomed)
    bump_version(graph_root)


def remove_uncommitted(graph_root: Path) -> list[str]:
    """Delete staging leftovers and edge or link folders whose partition never committed (those of a
    partition a compaction replaced are the compaction's to remove)."""
    graph_root = Path(graph_root)
    removed = []
    committed = set(on_disk(graph_root))
    for table in ALL_TABLES:
        root = graph_root / table
        if not root.is_dir():
            continue
        for entry in root.iterdir():
            orphan = entry.name.startswith(".tmp-") or (
                table != "nodes" and entry.is_dir() and entry.name.startswith("partition=") and entry.name.split("=", 1)[1] not in committed
            )
            if orphan:
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
                removed.append(f"{table}/{entry.name}")
    return removed
