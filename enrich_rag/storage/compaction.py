"""Merge enrichment partitions into one: the rows readers see stay the same, the files get few.

Every enrichment adds a partition (three small Parquet files and three DVC records); a thousand of
them make every listing, load and `dvc status` slow. A compacted partition holds their rows as the
store reads them: a node once, with the name, type and description of the oldest partition that
wrote it and every alias; every edge and link row as written; the union of their deep-read marks;
the chunks of documents they added and the chunk ids they removed. Rows of removed chunks (theirs,
added and later removed) are dropped for good; the removals stay listed, since the seed's rows they
hide are the build's and stay as built. Facts forgotten stay, hidden by the forgets it lists as theirs
did (their index rows stay too: a forget is undone by rolling it back, and that needs no re-embedding).
The commit protocol around it (intent, commit point, DVC pointers kept for an undo) is GraphWriter's.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from enrich_rag.storage.graph_store import NODES_BY_ID
from enrich_rag.storage.partitions import (
    PART_FILE,
    GraphTables,
    chunks_file,
    partition_dir,
    partition_forgets,
    partition_reads,
    partition_removes,
)

_READ = (
    "SELECT * EXCLUDE (filename), list_position($files, filename) AS ord "
    "FROM read_parquet($files, filename = true, hive_partitioning = false)"
)


def merged_tables(graph_root: Path | str, partitions: list[str]) -> GraphTables:
    """The rows of `partitions` (given oldest first, as their ids sort) as one partition's tables."""
    root = Path(graph_root)

    def files(table: str) -> list[str]:
        return [str(partition_dir(root, table, p) / PART_FILE) for p in partitions]

    corpus = [str(f) for p in partitions if (f := chunks_file(root, p))]
    removes = sorted({c for f in corpus for c in partition_removes(f)})
    forgets = sorted({i for path in files("nodes") for i in partition_forgets(path)})
    kept = "WHERE chunk_id NOT IN (SELECT unnest($removes::VARCHAR[]))"
    con = duckdb.connect(":memory:")
    try:
        # A node once, as the graph store shows it: the same query, over these partitions' rows.
        named = f"SELECT *, $names[ord] AS partition FROM ({_READ})"
        con.execute(f"CREATE TABLE raw AS {named}", {"files": files("nodes"), "names": partitions})
        nodes = con.sql(f"SELECT * EXCLUDE (partitions) FROM ({NODES_BY_ID.format(rows='raw')}) ORDER BY id").to_arrow_table()
        read = f"SELECT * EXCLUDE (ord) FROM ({_READ}) {kept} ORDER BY ord"
        edges, links = (con.sql(read, params={"files": files(table), "removes": removes}).to_arrow_table() for table in ("edges", "links"))
        chunks = con.sql(read, params={"files": corpus, "removes": removes}).to_arrow_table() if corpus else None
    finally:
        con.close()
    reads: dict[str, set[str]] = {}
    for path in files("nodes"):
        for extractor, read_chunks in partition_reads(path).items():
            reads.setdefault(extractor, set()).update(read_chunks)
    return GraphTables(
        nodes, edges, links, reads={e: sorted(c) for e, c in reads.items()}, chunks=chunks, removes=tuple(removes), forgets=tuple(forgets)
    )
