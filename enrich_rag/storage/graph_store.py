"""Read the knowledge graph with DuckDB straight off the hive-partitioned Parquet files.

Only committed partitions (see `partitions.py`) are read; the file lists are re-read when the
partition folders change, so a store opened before an enrichment sees it on its next query.
All values reach SQL as bound parameters.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from enrich_rag.errors import StorageError
from enrich_rag.storage.ids import node_id, normalize_name
from enrich_rag.storage.partitions import PART_FILE, committed_partitions, partition_dir


@dataclass(frozen=True)
class Neighborhood:
    """Edges touching the seed ids (either direction) and every node those edges reach."""

    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]


def _rows(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


class GraphStore:
    def __init__(self, graph_root: Path | str, threads: int | None = None):
        self.root = Path(graph_root)
        self._con = duckdb.connect(":memory:")
        if threads:
            self._con.execute(f"SET threads = {int(threads)}")
        self._lock = threading.Lock()
        self._signature: tuple | None = None
        self.partitions: list[str] = []
        self._refresh()

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _current_signature(self) -> tuple:
        sig = []
        for table in ("nodes", "edges"):
            folder = self.root / table
            sig.append(os.stat(folder).st_mtime_ns if folder.is_dir() else 0)
        return tuple(sig)

    def _refresh(self) -> None:
        signature = self._current_signature()
        if signature == self._signature:
            return
        partitions = committed_partitions(self.root)
        if not partitions:
            raise StorageError(f"no graph partitions under {self.root} (run `dvc repro` or `enrich-rag build`)")
        files = {
            table: [str(partition_dir(self.root, table, p) / PART_FILE) for p in partitions]
            for table in ("nodes", "edges")
        }
        missing = [f for f in files["edges"] if not Path(f).is_file()]
        if missing:
            raise StorageError(f"partition has nodes but no edges file: {missing[0]}")
        try:
            # Views over explicit file lists: DDL cannot take bound parameters, so the paths are
            # quoted literals built only from validated partition ids.
            for table in ("nodes", "edges"):
                listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files[table])
                self._con.execute(
                    f"CREATE OR REPLACE VIEW raw_{table} AS SELECT * FROM "
                    f"read_parquet([{listing}], hive_partitioning = true)"
                )
            # A node seen in several partitions keeps its first (seed) row; aliases are merged.
            self._con.execute(
                """
                CREATE OR REPLACE VIEW nodes AS
                SELECT id, first(name ORDER BY partition <> 'seed', partition) AS name,
                       first(type ORDER BY partition <> 'seed', partition) AS type,
                       first(description ORDER BY partition <> 'seed', partition) AS description,
                       list_distinct(flatten(list(aliases))) AS aliases,
                       list(partition ORDER BY partition) AS partitions
                FROM raw_nodes GROUP BY id
                """
            )
            self._con.execute("CREATE OR REPLACE VIEW edges AS SELECT * FROM raw_edges")
        except duckdb.Error as exc:
            raise StorageError(f"cannot read graph partitions under {self.root}: {exc}") from exc
        self.partitions = partitions
        self._signature = signature

    def _query(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        with self._lock:
            self._refresh()
            try:
                return _rows(self._con.execute(sql, params or []))
            except duckdb.Error as exc:
                raise StorageError(f"graph query failed: {exc}") from exc

    def node(self, node_id_: str) -> dict[str, Any] | None:
        rows = self._query("SELECT * FROM nodes WHERE id = ?", [node_id_])
        return rows[0] if rows else None

    def nodes_by_ids(self, ids: list[str]) -> list[dict[str, Any]]:
        if not ids:
            return []
        return self._query("SELECT * FROM nodes WHERE id IN (SELECT unnest(?::VARCHAR[]))", [list(ids)])

    def find_nodes(self, name: str, limit: int = 10) -> list[dict[str, Any]]:
        """Exact normalised-name match first, then names/aliases containing the text."""
        exact = self.node(node_id(name))
        if exact:
            return [exact]
        needle = normalize_name(name)
        if not needle:
            return []
        return self._query(
            """
            SELECT * FROM nodes
            WHERE lower(name) LIKE '%' || ? || '%'
               OR len(list_filter(aliases, a -> lower(a) LIKE '%' || ? || '%')) > 0
            ORDER BY length(name) LIMIT ?
            """,
            [needle, needle, int(limit)],
        )

    def neighbors(self, ids: list[str], limit: int | None = None) -> Neighborhood:
        if not ids:
            return Neighborhood([], [])
        seeds = sorted(set(ids))
        edges = self._query(
            f"""
            SELECT * FROM edges WHERE src IN (SELECT unnest($1::VARCHAR[]))
            UNION ALL
            SELECT * FROM edges WHERE dst IN (SELECT unnest($1::VARCHAR[]))
                                  AND src NOT IN (SELECT unnest($1::VARCHAR[]))
            ORDER BY confidence DESC, id {'LIMIT ' + str(int(limit)) if limit else ''}
            """,
            [seeds],
        )
        node_ids = sorted({e["src"] for e in edges} | {e["dst"] for e in edges} | set(seeds))
        return Neighborhood(self.nodes_by_ids(node_ids), edges)

    def edges_by_ids(self, ids: list[str]) -> list[dict[str, Any]]:
        if not ids:
            return []
        return self._query("SELECT * FROM edges WHERE id IN (SELECT unnest(?::VARCHAR[]))", [list(ids)])

    def partition_rows(self, partition: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """A partition's own node rows, and its edges with both end names (what the index needs)."""
        nodes = self._query(
            "SELECT id, name, type, description FROM raw_nodes WHERE partition = ? ORDER BY id", [partition]
        )
        edges = self._query(
            """
            SELECT e.id, e.relation, s.name AS src_name, d.name AS dst_name
            FROM raw_edges e JOIN nodes s ON s.id = e.src JOIN nodes d ON d.id = e.dst
            WHERE e.partition = ? ORDER BY e.id
            """,
            [partition],
        )
        return nodes, edges

    def counts(self) -> dict[str, Any]:
        per_partition = self._query(
            """
            SELECT p.partition, coalesce(n.nodes, 0) AS nodes, coalesce(e.edges, 0) AS edges
            FROM (SELECT DISTINCT partition FROM raw_nodes) p
            LEFT JOIN (SELECT partition, count(*) AS nodes FROM raw_nodes GROUP BY ALL) n USING (partition)
            LEFT JOIN (SELECT partition, count(*) AS edges FROM raw_edges GROUP BY ALL) e USING (partition)
            ORDER BY p.partition <> 'seed', p.partition
            """
        )
        totals = self._query("SELECT (SELECT count(*) FROM nodes) AS nodes, (SELECT count(*) FROM edges) AS edges")[0]
        return {"nodes": totals["nodes"], "edges": totals["edges"], "partitions": per_partition}
