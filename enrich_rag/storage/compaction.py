"""Merge enrichment partitions into one: the rows readers see stay the same, the files get few.

Every enrichment adds a partition (three small Parquet files and three DVC records); a thousand of
them make every listing, load and `dvc status` slow. A compacted partition holds their rows as the
store reads them: a node once, with the name, type and description of the oldest partition that
wrote it and every alias; every edge and link row as written; the union of their deep-read marks.
The commit protocol around it (intent, commit point, DVC pointers kept for an undo) is GraphWriter's.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from enrich_rag.storage.partitions import PART_FILE, GraphTables, partition_dir, partition_reads

# The graph store's nodes table keeps the oldest partition's name, type and description (graph_store.py).
_NODES = """
    SELECT id, first(name ORDER BY ord) AS name, first(type ORDER BY ord) AS type,
           first(description ORDER BY ord) AS description,
           list_sort(list_distinct(flatten(list(aliases)))) AS aliases
    FROM raw GROUP BY id ORDER BY id
"""
_READ = (
    "SELECT * EXCLUDE (filename), list_position($files, filename) AS ord "
    "FROM read_parquet($files, filename = true, hive_partitioning = false)"
)


def merged_tables(graph_root: Path | str, partitions: list[str]) -> GraphTables:
    """The rows of `partitions` (given oldest first) as one partition's tables."""
    root = Path(graph_root)

    def files(table: str) -> list[str]:
        return [str(partition_dir(root, table, p) / PART_FILE) for p in partitions]

    con = duckdb.connect(":memory:")
    try:
        con.execute(f"CREATE TABLE raw AS {_READ}", {"files": files("nodes")})
        nodes = con.sql(_NODES).to_arrow_table()
        edges, links = (
            con.sql(f"SELECT * EXCLUDE (ord) FROM ({_READ}) ORDER BY ord", params={"files": files(table)}).to_arrow_table()
            for table in ("edges", "links")
        )
    finally:
        con.close()
    reads: dict[str, set[str]] = {}
    for path in files("nodes"):
        for extractor, chunks in partition_reads(path).items():
            reads.setdefault(extractor, set()).update(chunks)
    return GraphTables(nodes, edges, links, {e: sorted(c) for e, c in reads.items()})
