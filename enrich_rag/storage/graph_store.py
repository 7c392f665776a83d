"""Read the knowledge graph with DuckDB off the hive-partitioned Parquet files.

Parquet is the source of truth. Scanning it for a 1-hop query over 5M edges takes ~350 ms, so
reads go to DuckDB tables with ART indexes on node and edge ids (~10 ms a query). The seed, nearly
all of the rows, is derived once into a DuckDB file beside the Parquet (`.store/seed-<its files'
signature>.duckdb`, built under a lock by the first process that needs it, atomically) and attached
read-only: every process on the machine opens it in milliseconds and shares its pages through the OS
cache, instead of loading its own copy. Enrichment partitions, small, are loaded into each process's
memory; views join the two. Before every query the store checks the graph's version stamp (two stat
calls); when it moved, it compares the committed partitions with what it loaded: a new partition is
inserted, a removed one deleted, a rewritten one reloaded (a new seed: the file derived from it). All values reach SQL as bound parameters.

A partition whose files cannot be read (truncated, missing a table) is quarantined: skipped with one
warning naming it and the repair command, so one damaged enrichment never stops every command.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from filelock import FileLock

from enrich_rag.errors import StorageError
from enrich_rag.storage.atomic import staging_path
from enrich_rag.storage.ids import node_id, normalize_name
from enrich_rag.storage.neighbourhood import NEIGHBOURHOOD_SQL, Neighbourhood, neighbourhood_from_row
from enrich_rag.storage.partitions import (
    ALL_TABLES,
    PART_FILE,
    TABLES,
    GraphTables,
    chunks_file,
    committed_partitions,
    graph_version,
    partition_dir,
    partition_forgets,
    partition_reads,
    partition_removes,
)
from enrich_rag.storage.schema import EDGES, LINKS, NODES, SEED_PARTITION, STRUCTURAL_RELATIONS

log = logging.getLogger(__name__)
_DUCKDB_TYPES = {"string": "VARCHAR", "float": "FLOAT", "int32": "INTEGER", "bool": "BOOLEAN", "list<item: string>": "VARCHAR[]"}
INDEX_LOOKUP_BATCH = 48
# Names carry the match; a short description disambiguates (and long texts cost embedding time).
NODE_DESCRIPTION_CHARS = 100


def _rows(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


STORE_DIR = ".store"  # in the graph root: the seed's DuckDB file, derived from its Parquet
# A node is one row however many partitions wrote it: the seed's (then the oldest) name, type and
# description, every alias, the partitions in order.
NODES_BY_ID = """
    SELECT id, first(name ORDER BY partition <> 'seed', partition) AS name,
           first(type ORDER BY partition <> 'seed', partition) AS type,
           first(description ORDER BY partition <> 'seed', partition) AS description,
           list_distinct(flatten(list(aliases))) AS aliases,
           list(partition ORDER BY partition <> 'seed', partition) AS partitions
    FROM {rows} GROUP BY id
"""
# The seed's rows (in the attached file `base`) and the enrichments' (in memory), as one graph. A node
# an enrichment mentions again is merged in memory (mem_nodes) and hidden from the seed's side.
_VIEWS = (
    "CREATE OR REPLACE VIEW raw_nodes AS SELECT * FROM base.raw_nodes UNION ALL SELECT * FROM mem_raw_nodes",
    "CREATE OR REPLACE VIEW nodes AS SELECT * FROM base.nodes WHERE id NOT IN (SELECT id FROM mem_nodes) UNION ALL SELECT * FROM mem_nodes",
    "CREATE OR REPLACE VIEW raw_edges AS SELECT * FROM base.edges UNION ALL SELECT * FROM mem_edges",
)


def _edge_and_link_views(hide_removed: bool) -> tuple[str, ...]:
    """Once documents have been removed, facts and links read from their chunks are hidden, and once a
    fact was forgotten, that fact (the seed's file is read-only; compaction drops them from the
    enrichment side for good); without either the views filter nothing, so the common case pays
    nothing. The graph index keeps the rows of hidden facts as their partitions wrote them
    (`raw_edges`): every lookup goes through these views, so none surfaces, and a rolled-back removal
    needs no re-embedding."""
    kept = " WHERE chunk_id NOT IN (SELECT chunk_id FROM removed)" if hide_removed else ""
    facts = f"{kept} AND id NOT IN (SELECT id FROM forgotten)" if hide_removed else ""
    return tuple(
        f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM base.{t}{w} UNION ALL SELECT * FROM mem_{t}{w}"
        for t, w in (("edges", facts), ("links", kept))
    )


# text.normalize_answer in SQL: lower case, ASCII punctuation out, articles out, single spaces.
_NORMALISED = (
    "trim(regexp_replace(regexp_replace(regexp_replace(lower({}), '[!-/:-@\\[-`{{-~]', '', 'g'), "
    "'\\b(a|an|the)\\b', ' ', 'g'), '\\s+', ' ', 'g'))"
)
_INDEXES = {"nodes": ("id",), "edges": ("src", "dst", "id"), "links": ("node", "chunk_id")}
_SOURCES = (("nodes", "raw_nodes", NODES), ("edges", "edges", EDGES), ("links", "links", LINKS))


def _columns(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name} {_DUCKDB_TYPES[str(f.type)]}" for f in schema)


def _create_graph_tables(con: duckdb.DuckDBPyConnection, prefix: str = "") -> None:
    """Empty tables of one graph side (`mem_` for the enrichments), each row with its partition."""
    for _, target, schema in _SOURCES:
        con.execute(f"CREATE TABLE IF NOT EXISTS {prefix}{target} ({_columns(schema)}, partition VARCHAR)")
    con.execute(f"CREATE TABLE IF NOT EXISTS {prefix}nodes AS {NODES_BY_ID.format(rows=f'{prefix}raw_nodes')}")


def _index(con: duckdb.DuckDBPyConnection, prefix: str = "") -> None:
    for table, columns in _INDEXES.items():
        for column in columns:
            con.execute(f"CREATE INDEX IF NOT EXISTS {prefix}{table}_{column} ON {prefix}{table} ({column})")


def _insert_partition(con: duckdb.DuckDBPyConnection, root: Path, partition: str, prefix: str = "") -> None:
    for table, target, schema in _SOURCES:
        path = str(partition_dir(root, table, partition) / PART_FILE)
        names = ", ".join(schema.names)
        con.execute(f"INSERT INTO {prefix}{target} SELECT {names}, ? FROM read_parquet(?, hive_partitioning = false)", [partition, path])


class GraphStore:
    def __init__(self, graph_root: Path | str):
        self.root = Path(graph_root)
        self._con = duckdb.connect(":memory:")
        self._lock = threading.Lock()
        self._loaded: dict[str, tuple] = {}  # partition -> file signature
        self._version: tuple | None = None  # graph_version() when the partitions were last compared
        self.partitions: list[str] = []
        self.damaged: dict[str, str] = {}  # quarantined partition -> why
        _create_graph_tables(self._con, "mem_")
        self._con.execute("CREATE TABLE reads (chunk_id VARCHAR, extractor VARCHAR, partition VARCHAR)")
        self._con.execute("CREATE TABLE removed (chunk_id VARCHAR, partition VARCHAR)")
        self._con.execute("CREATE TABLE forgotten (id VARCHAR, partition VARCHAR)")
        self._hiding = False
        self._attach_seed(None)
        for view in _edge_and_link_views(False) + _VIEWS:
            self._con.execute(view)
        self._refresh()

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _signature(self, partition: str) -> tuple:
        sig: list[tuple[int, int, int] | None] = []
        for table in ALL_TABLES:
            path = partition_dir(self.root, table, partition) / PART_FILE
            try:
                stat = path.stat()
            except FileNotFoundError:
                sig.append(None)
                continue
            sig.append((stat.st_size, stat.st_mtime_ns, stat.st_ino))
        return tuple(sig)

    def _seed_file(self, signature: tuple) -> Path:
        """The seed's DuckDB file, built here unless another process has built it from these files."""
        folder = self.root / STORE_DIR
        target = folder / f"seed-{hashlib.sha256(repr(signature).encode()).hexdigest()[:16]}.duckdb"
        if target.is_file():
            return target
        folder.mkdir(exist_ok=True)
        (folder / ".gitignore").write_text("*\n")  # derived data: never versioned
        with FileLock(str(folder / ".build.lock")):
            if target.is_file():
                return target
            for leftover in folder.glob(".tmp-*"):  # a build killed before its rename
                leftover.unlink()
            tmp = staging_path(target)
            try:
                con = duckdb.connect(str(tmp))
                try:
                    _create_graph_tables(con)
                    _insert_partition(con, self.root, SEED_PARTITION)
                    con.execute(f"CREATE OR REPLACE TABLE nodes AS {NODES_BY_ID.format(rows='raw_nodes')}")
                    _index(con)
                    con.execute("CHECKPOINT")
                finally:
                    con.close()
                os.replace(tmp, target)
            finally:
                for path in (tmp, Path(f"{tmp}.wal")):
                    path.unlink(missing_ok=True)
            for old in folder.glob("seed-*.duckdb"):  # an open copy stays readable to whoever has it open
                if old != target:
                    old.unlink(missing_ok=True)
        return target

    def _attach_seed(self, signature: tuple | None) -> None:
        """Attach the seed's file read-only as `base`; an empty in-memory one without a (readable) seed."""
        con = self._con
        if any(row[0] == "base" for row in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()):
            con.execute("DETACH base")
        if signature is not None:
            missing = [t for t, sig in zip(TABLES, signature) if sig is None]
            try:
                if missing:
                    raise StorageError(f"no {', '.join(missing)} file")
                path = str(self._seed_file(signature)).replace("'", "''")
                con.execute(f"ATTACH '{path}' AS base (READ_ONLY)")
                self._load_reads(SEED_PARTITION)
                self._healthy(SEED_PARTITION)
                return
            except (duckdb.Error, StorageError, OSError, ValueError) as exc:
                self._quarantine(SEED_PARTITION, exc)
                con.execute("DELETE FROM reads WHERE partition = ?", [SEED_PARTITION])
        con.execute("ATTACH ':memory:' AS base")
        _create_graph_tables(con, "base.")

    def _healthy(self, partition: str) -> None:
        self.damaged.pop(partition, None)

    def _quarantine(self, partition: str, exc: Exception) -> None:
        reason = str(exc).splitlines()[0]
        if self.damaged.get(partition) != reason:
            log.warning(
                "graph partition '%s' is damaged (%s): skipped; `enrich-rag graph repair` restores or removes it", partition, reason
            )
        self.damaged[partition] = reason

    def _load_reads(self, partition: str) -> None:
        reads = partition_reads(partition_dir(self.root, "nodes", partition) / PART_FILE)
        rows = [(chunk, extractor, partition) for extractor, chunks in reads.items() for chunk in chunks]
        self._con.execute("DELETE FROM reads WHERE partition = ?", [partition])
        if rows:
            self._con.executemany("INSERT INTO reads VALUES (?, ?, ?)", rows)

    def _load(self, partition: str, signature: tuple) -> None:
        """Insert one enrichment partition's rows, all or none; an unreadable partition is quarantined."""
        con = self._con
        missing = [t for t, sig in zip(TABLES, signature) if sig is None]
        try:
            if missing:
                hint = " (a graph built before links existed: rebuild it with `dvc repro`)" if missing == ["links"] else ""
                raise StorageError(f"no {', '.join(missing)} file{hint}")
            con.execute("BEGIN")
            _insert_partition(con, self.root, partition, prefix="mem_")
            reads = partition_reads(partition_dir(self.root, "nodes", partition) / PART_FILE)
            rows = [(chunk, extractor, partition) for extractor, chunks in reads.items() for chunk in chunks]
            if rows:
                con.executemany("INSERT INTO reads VALUES (?, ?, ?)", rows)
            if (corpus := chunks_file(self.root, partition)) and (removes := partition_removes(corpus)):
                con.execute("INSERT INTO removed SELECT unnest(?::VARCHAR[]), ?", [removes, partition])
            if forgets := partition_forgets(partition_dir(self.root, "nodes", partition) / PART_FILE):
                con.execute("INSERT INTO forgotten SELECT unnest(?::VARCHAR[]), ?", [forgets, partition])
            con.execute("COMMIT")
            self._healthy(partition)
        except (duckdb.Error, StorageError, OSError, ValueError) as exc:
            if not missing:
                con.execute("ROLLBACK")
            self._quarantine(partition, exc)

    def _refresh(self, full: bool = False) -> None:
        """Compare the committed partitions with what is loaded when the graph's version stamp moved, or
        always (`full`; and while a partition is quarantined, so a copy put back by hand is seen)."""
        version = graph_version(self.root)  # before listing: a change while listing shows next time
        if version == self._version and not full and not self.damaged:
            return
        partitions = committed_partitions(self.root)
        if not partitions:
            raise StorageError(f"no graph partitions under {self.root} (run `dvc repro` or `enrich-rag build`)")
        wanted = {p: self._signature(p) for p in partitions}
        if wanted == self._loaded:
            self._version = version
            return
        con = self._con
        if wanted.get(SEED_PARTITION) != self._loaded.get(SEED_PARTITION):
            self._attach_seed(wanted.get(SEED_PARTITION))
        for partition in [p for p in self._loaded if p != SEED_PARTITION and wanted.get(p) != self._loaded[p]]:
            for target in ("mem_raw_nodes", "mem_edges", "mem_links", "reads", "removed", "forgotten"):
                con.execute(f"DELETE FROM {target} WHERE partition = ?", [partition])
            self._healthy(partition)
        for partition in [p for p in partitions if p != SEED_PARTITION and self._loaded.get(p) != wanted[p]]:
            self._load(partition, wanted[partition])
        seed_rows = (
            "SELECT id, name, type, description, aliases, 'seed' AS partition FROM base.nodes WHERE id IN (SELECT id FROM mem_raw_nodes)"
        )
        merged = f"({seed_rows} UNION ALL SELECT * FROM mem_raw_nodes)"
        con.execute(f"CREATE OR REPLACE TABLE mem_nodes AS {NODES_BY_ID.format(rows=merged)}")
        _index(con, "mem_")
        hiding = bool(con.execute("SELECT (SELECT count(*) FROM removed) + (SELECT count(*) FROM forgotten)").fetchone()[0])  # type: ignore[index]
        if hiding != self._hiding:
            for view in _edge_and_link_views(hiding):
                con.execute(view)
            self._hiding = hiding
        self._loaded = wanted
        self._version = version
        self.partitions = [p for p in partitions if p not in self.damaged]
        if not self.partitions:
            raise StorageError(f"every graph partition under {self.root} is damaged: {self.damaged} (run `enrich-rag graph repair`)")

    def quarantined(self) -> dict[str, str]:
        """Partitions skipped because their files cannot be read, with why (after a fresh look at disk)."""
        with self._lock:
            self._refresh(full=True)
            return dict(self.damaged)

    def _query(self, sql: str, params: list[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
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
        # DuckDB answers an IN-list from the ART index only for short lists (~50 values); longer
        # lists fall back to a full scan, so look up in short batches.
        unique = sorted(set(ids))
        rows: list[dict[str, Any]] = []
        for start in range(0, len(unique), INDEX_LOOKUP_BATCH):
            batch = unique[start : start + INDEX_LOOKUP_BATCH]
            rows += self._query("SELECT * FROM nodes WHERE id IN (SELECT unnest(?::VARCHAR[]))", [batch])
        return rows

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
               OR len(list_filter(aliases, lambda a: lower(a) LIKE '%' || ? || '%')) > 0
            ORDER BY length(name) LIMIT ?
            """,
            [needle, needle, int(limit)],
        )

    def neighbors(self, ids: list[str], limit: int | None = None) -> list[dict[str, Any]]:
        """Edges touching these ids (either direction), most confident first."""
        if not ids:
            return []
        return self._query(
            f"""
            SELECT * FROM edges WHERE src IN (SELECT unnest($1::VARCHAR[]))
            UNION ALL
            SELECT * FROM edges WHERE dst IN (SELECT unnest($1::VARCHAR[]))
                                  AND src NOT IN (SELECT unnest($1::VARCHAR[]))
            ORDER BY confidence DESC, id {"LIMIT " + str(int(limit)) if limit else ""}
            """,
            [sorted(set(ids))],
        )

    def neighbourhood(self, nodes: list[str], edge_ids: list[str], chunk_ids: list[str], cap: int) -> Neighbourhood:
        """A question's bounded graph in one query (storage/neighbourhood.py): from the entities it names
        (`nodes`), the graph-index facts it hit (`edge_ids`) and its dense passages (`chunk_ids`)."""
        row = self._query(
            NEIGHBOURHOOD_SQL, {"nodes": sorted(set(nodes)), "edges": list(edge_ids), "chunks": sorted(set(chunk_ids)), "cap": int(cap)}
        )[0]
        return neighbourhood_from_row(row)

    def has_edges_from(self, prefix: str) -> bool:
        """Whether any enrichment holds facts of an extractor named `prefix:*` (a cheap test before a lookup)."""
        return bool(self._query("SELECT 1 AS found FROM mem_edges WHERE extractor LIKE $prefix || ':%' LIMIT 1", {"prefix": prefix}))

    def learned_edges(
        self, prefix: str, srcs: list[str] | None = None, key: str | None = None, ids: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """Facts an extractor named `prefix:*` wrote (never the seed's): all of them, or those from `srcs`,
        whose relation normalised (SQuAD's way: lower case, no ASCII punctuation, no articles) is `key`,
        or with these `ids`. Hidden ones (forgotten, of removed chunks) stay hidden. Newest first."""
        where = ""
        if srcs is not None or key is not None or ids is not None:
            same = _NORMALISED.format("relation")
            where = f"AND (src IN (SELECT unnest($srcs::VARCHAR[])) OR {same} = $key OR id IN (SELECT unnest($ids::VARCHAR[])))"
        params = {"prefix": prefix} | ({"srcs": sorted(set(srcs or [])), "key": key or "", "ids": list(ids or [])} if where else {})
        return self._query(
            f"""
            SELECT * FROM mem_edges WHERE extractor LIKE $prefix || ':%'
              AND id NOT IN (SELECT id FROM forgotten) AND chunk_id NOT IN (SELECT chunk_id FROM removed) {where}
            ORDER BY partition DESC, id
            """,
            params,
        )

    def edges_by_ids(self, ids: list[str]) -> list[dict[str, Any]]:
        if not ids:
            return []
        return self._query("SELECT * FROM edges WHERE id IN (SELECT unnest(?::VARCHAR[]))", [list(ids)])

    def covered_chunks(self, chunk_ids: list[str]) -> set[str]:
        """Which of these chunks the extractor has read: they have facts, or mention links beyond the
        title link every chunk gets at build time."""
        if not chunk_ids:
            return set()
        rows = self._query(
            """
            SELECT chunk_id FROM edges WHERE chunk_id IN (SELECT unnest($1::VARCHAR[]))
            UNION
            SELECT chunk_id FROM links WHERE NOT is_title AND chunk_id IN (SELECT unnest($1::VARCHAR[]))
            """,
            [list(chunk_ids)],
        )
        return {r["chunk_id"] for r in rows}

    def chunks_read_by(self, chunk_ids: list[str], extractor: str) -> set[str]:
        """Which of these chunks this extractor has read (deep extraction): a partition records it as
        read, or, in graphs written before partitions recorded their reads, holds facts it wrote there."""
        if not chunk_ids:
            return set()
        rows = self._query(
            """
            SELECT chunk_id FROM edges WHERE extractor = $2 AND chunk_id IN (SELECT unnest($1::VARCHAR[]))
            UNION SELECT chunk_id FROM reads WHERE extractor = $2 AND chunk_id IN (SELECT unnest($1::VARCHAR[]))
            """,
            [list(chunk_ids), extractor],
        )
        return {r["chunk_id"] for r in rows}

    def links(self, node_ids: list[str] | None = None, chunk_ids: list[str] | None = None) -> list[dict[str, Any]]:
        """Entity-passage links touching these nodes or these chunks, one row per (node, chunk) pair
        however many partitions saw it, with `degree`: how many passages the node links to."""
        if not node_ids and not chunk_ids:
            return []
        return self._query(
            """
            WITH wanted AS (
                SELECT * FROM links WHERE node IN (SELECT unnest($1::VARCHAR[]))
                UNION ALL
                SELECT * FROM links WHERE chunk_id IN (SELECT unnest($2::VARCHAR[]))
            ), pairs AS (
                SELECT node, chunk_id, any_value(doc_id) AS doc_id, max(count) AS count, bool_or(is_title) AS is_title
                FROM wanted GROUP BY node, chunk_id
            )
            SELECT p.*, d.degree FROM pairs p
            JOIN (SELECT node, count(DISTINCT chunk_id) AS degree FROM links
                  WHERE node IN (SELECT DISTINCT node FROM pairs) GROUP BY node) d USING (node)
            ORDER BY p.node, p.chunk_id
            """,
            [sorted(set(node_ids or [])), sorted(set(chunk_ids or []))],
        )

    def named_facts(self) -> list[dict[str, Any]]:
        """Every fact with a named relation and an evidence sentence, with its two ends' entity types:
        what a synthetic question can be written about. Structural edges carry no statement."""
        return self._query(
            """
            SELECT e.id, any_value(e.src) AS src, any_value(e.dst) AS dst, any_value(e.src_name) AS src_name,
                   any_value(e.dst_name) AS dst_name, any_value(e.relation) AS relation, any_value(e.evidence) AS evidence,
                   any_value(e.chunk_id) AS chunk_id, any_value(e.doc_id) AS doc_id,
                   any_value(s.type) AS src_type, any_value(d.type) AS dst_type
            FROM edges e JOIN nodes s ON s.id = e.src JOIN nodes d ON d.id = e.dst
            WHERE e.relation NOT IN (SELECT unnest(?::VARCHAR[])) AND trim(e.evidence) <> ''
            GROUP BY e.id ORDER BY e.id
            """,
            [list(STRUCTURAL_RELATIONS)],
        )

    def title_chunks(self) -> dict[str, set[str]]:
        """Entity -> the passages that are about it (their title names it)."""
        about: dict[str, set[str]] = {}
        for row in self._query("SELECT DISTINCT node, chunk_id FROM links WHERE is_title"):
            about.setdefault(row["node"], set()).add(row["chunk_id"])
        return about

    def only_new(self, tables: GraphTables) -> GraphTables:
        """The rows of `tables` the graph does not hold yet (nodes and edges by id, links by node and
        chunk, reads by chunks not yet read): what an enrichment adds. Nothing new means no partition, so
        re-reading a chunk is idempotent."""
        known_nodes = {r["id"] for r in self.nodes_by_ids(tables.nodes.column("id").to_pylist())}
        known_edges = {r["id"] for r in self.edges_by_ids(tables.edges.column("id").to_pylist())}
        known_links = {(r["node"], r["chunk_id"]) for r in self.links(chunk_ids=tables.links.column("chunk_id").to_pylist())}
        return GraphTables(
            tables.nodes.filter(pa.array([i not in known_nodes for i in tables.nodes.column("id").to_pylist()], pa.bool_())),
            tables.edges.filter(pa.array([i not in known_edges for i in tables.edges.column("id").to_pylist()], pa.bool_())),
            tables.links.filter(
                pa.array(
                    [
                        pair not in known_links
                        for pair in zip(tables.links.column("node").to_pylist(), tables.links.column("chunk_id").to_pylist())
                    ],
                    pa.bool_(),
                )
            ),
            reads={e: unread for e, chunks in tables.reads.items() if (unread := sorted(set(chunks) - self.chunks_read_by(chunks, e)))},
            chunks=tables.chunks,
            removes=tables.removes,
            forgets=tables.forgets,
        )

    def index_documents(self, partition: str) -> list[dict[str, Any]]:
        """What a partition adds to the graph index: the nodes it introduced and its named-relation edges.

        A node an enrichment merely mentions again stays owned by the partition that introduced it,
        so re-indexing one partition never overwrites another's rows. Structural edges stay out of
        the index (three quarters of all edges, no text of their own); DuckDB's 1-hop reaches them.
        """
        nodes = self._query("SELECT id, name, type, description FROM nodes WHERE partitions[1] = ? ORDER BY id", [partition])
        edges = self._query(
            """
            SELECT id, relation, src_name, dst_name FROM raw_edges WHERE partition = ? ORDER BY id
            """,
            [partition],
        )
        docs: list[dict[str, Any]] = [
            {
                "id": n["id"],
                "text": f"{n['name']}. {n['description'][:NODE_DESCRIPTION_CHARS]}".strip(),
                "kind": "node",
                "name": n["name"],
                "partition": partition,
            }
            for n in nodes
        ]
        docs += [
            {"id": e["id"], "text": f"{e['src_name']} {e['relation']} {e['dst_name']}", "kind": "edge", "partition": partition}
            for e in edges
            if e["relation"] not in STRUCTURAL_RELATIONS
        ]
        return docs

    def rows_of(self, partitions: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Nodes and edges as these partitions wrote them (a node once, with the first partition's name)."""
        nodes = self._query(
            """
            SELECT id, first(name ORDER BY partition <> 'seed', partition) AS name,
                   first(type ORDER BY partition <> 'seed', partition) AS type,
                   first(description ORDER BY partition <> 'seed', partition) AS description,
                   list(partition ORDER BY partition <> 'seed', partition) AS partitions
            FROM raw_nodes WHERE partition IN (SELECT unnest($1::VARCHAR[])) GROUP BY id ORDER BY id
            """,
            [partitions],
        )
        edges = self._query("SELECT * FROM edges WHERE partition IN (SELECT unnest($1::VARCHAR[])) ORDER BY id", [partitions])
        return nodes, edges

    def counts(self) -> dict[str, Any]:
        per_partition = self._query(
            """
            SELECT p.partition, coalesce(n.nodes, 0) AS nodes, coalesce(e.edges, 0) AS edges
            FROM (SELECT DISTINCT partition FROM raw_nodes UNION SELECT DISTINCT partition FROM edges) p
            LEFT JOIN (SELECT partition, count(*) AS nodes FROM raw_nodes GROUP BY ALL) n USING (partition)
            LEFT JOIN (SELECT partition, count(*) AS edges FROM edges GROUP BY ALL) e USING (partition)
            ORDER BY p.partition <> 'seed', p.partition
            """
        )
        # Which extractor wrote each partition's facts (the seed's spaCy, enrichment's deep llm ...).
        by_extractor = self._query("SELECT partition, extractor, count(*) AS n FROM edges GROUP BY ALL ORDER BY ALL")
        for row in per_partition:
            row["extractors"] = {r["extractor"] or "?": r["n"] for r in by_extractor if r["partition"] == row["partition"]}
        totals = self._query("SELECT (SELECT count(*) FROM nodes) AS nodes, (SELECT count(*) FROM edges) AS edges")[0]
        return {"nodes": totals["nodes"], "edges": totals["edges"], "partitions": per_partition}
