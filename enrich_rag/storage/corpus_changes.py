"""The corpus as documents are added and removed after the build: built chunks + added - removed.

`enrich-rag add` and `remove` never edit the build's `chunks.parquet` or its stage: a partition that
adds documents carries their chunks (a fourth table beside nodes, edges and links, written before the
nodes rename, so the commit point covers them), and one that removes documents names the chunk ids it
removes in that table's footer (a tombstone). The partitions stay the truth; the corpus index follows
them. `CorpusSync` keeps it in line: the writer applies each change to it, and records, after saving,
which partitions the saved index reflects; a mismatch (a kill between the partition and the index, a
rollback, an index rebuilt by `dvc repro -f`) makes the next reconcile compare the index's ids with
the live chunks and fix the difference.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.partitions import chunks_file, corpus_partitions, partition_removes
from enrich_rag.storage.saved_index import SavedIndex
from enrich_rag.storage.schema import CHUNKS

STATE_FILE = ".corpus-index.json"  # in the graph root: what the saved corpus index reflects
MAX_INDEX_IDS = 50_000_000


def _chunk_files(graph_root: Path | str) -> list[Path]:
    """The chunks files of the committed partitions that add or remove documents, in write order."""
    return [path for p in corpus_partitions(graph_root) if (path := chunks_file(graph_root, p))]


def corpus_changes(graph_root: Path | str) -> tuple[list[str], list[str]]:
    """(chunk files of added documents, chunk ids removed) over the committed partitions."""
    files = _chunk_files(graph_root)
    return [str(f) for f in files], sorted({c for f in files for c in partition_removes(f)})


def changes_signature(graph_root: Path | str) -> tuple:
    """Changes when a partition that adds or removes documents is committed, rewritten or removed."""
    return tuple((f.parent.name, (stat := f.stat()).st_ino, stat.st_mtime_ns, stat.st_size) for f in _chunk_files(graph_root))


def live_chunks_sql(chunks_path: Path | str, graph_root: Path | str | None) -> tuple[str, list[Any]]:
    """DuckDB SELECT (and its parameters) of the corpus's live chunks, in the CHUNKS columns."""
    columns = ", ".join(CHUNKS.names)
    if graph_root is None:
        return f"SELECT {columns} FROM read_parquet(?)", [str(chunks_path)]
    files, removed = corpus_changes(graph_root)
    sources = [str(chunks_path), *files]
    return (
        f"SELECT {columns} FROM read_parquet(?::VARCHAR[], union_by_name = true) WHERE chunk_id NOT IN (SELECT unnest(?::VARCHAR[]))",
        [sources, removed],
    )


def live_chunk_ids(chunks_path: Path | str, graph_root: Path | str) -> set[str]:
    import duckdb

    sql, params = live_chunks_sql(chunks_path, graph_root)
    with duckdb.connect() as con:
        return {row[0] for row in con.execute(f"SELECT chunk_id FROM ({sql})", params).fetchall()}


@dataclass(frozen=True)
class DocumentEntry:
    """One document of the corpus as `enrich-rag docs` lists it."""

    doc_id: str
    title: str
    chunks: int  # live chunks (0: removed)
    origin: str  # "build", or the partition that added (the latest version of) it
    status: str  # built, added or removed

    def record(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "title": self.title, "chunks": self.chunks, "origin": self.origin, "status": self.status}


def documents(chunks_path: Path | str, graph_root: Path | str) -> list[DocumentEntry]:
    """Every document the corpus has held, by id: the built ones, those added since, and those removed."""
    import duckdb

    files = [(p, path) for p in corpus_partitions(graph_root) if (path := chunks_file(graph_root, p))]
    removed = {c for _, f in files for c in partition_removes(f)}
    sources = [("build", Path(chunks_path)), *files]
    rows: dict[str, list[tuple[str, str, str]]] = {}
    with duckdb.connect() as con:
        for origin, path in sources:  # write order: a later version's origin and title win
            for chunk_id, doc_id, title in con.execute("SELECT chunk_id, doc_id, title FROM read_parquet(?)", [str(path)]).fetchall():
                rows.setdefault(doc_id, []).append((chunk_id, title, origin))
    out = []
    for doc_id, chunks in sorted(rows.items()):
        live = [(title, origin) for chunk_id, title, origin in chunks if chunk_id not in removed]
        title, origin = (live or [chunks[-1][1:]])[-1]
        status = "removed" if not live else ("built" if origin == "build" else "added")
        out.append(DocumentEntry(doc_id, title, len(live), origin=origin, status=status))
    return out


@dataclass
class CorpusSync:
    """The corpus index and the chunks it indexes, as the graph writer changes them."""

    chunks_path: Path
    graph_root: Path
    index: SavedIndex
    passages: Callable[[list[str]], list[Any]] = field(repr=False)  # live chunk ids -> their Passages

    @property
    def state_path(self) -> Path:
        return self.graph_root / STATE_FILE

    def _state(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.state_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def touched(self) -> bool:
        """Whether documents were ever added or removed here (else the index is the build's, as built)."""
        return self.state_path.exists() or bool(corpus_partitions(self.graph_root))

    def is_current(self) -> bool:
        state = self._state()
        if state is None:
            return not self.state_path.exists() and not corpus_partitions(self.graph_root)
        return (
            not state.get("dirty")
            and state.get("partitions") == list(corpus_partitions(self.graph_root))
            and state.get("index") == repr(self.index.disk_version())
        )

    def mark_dirty(self) -> None:
        """Before a change the saved index will not reflect until reconciled (a rollback)."""
        with atomic_file(self.state_path) as tmp:
            tmp.write_text(json.dumps({"dirty": True}))

    def write_state(self) -> None:
        with atomic_file(self.state_path) as tmp:
            tmp.write_text(json.dumps({"partitions": list(corpus_partitions(self.graph_root)), "index": repr(self.index.disk_version())}))

    def apply(self, chunks: pa.Table | None, removes: list[str] | tuple[str, ...]) -> None:
        """Upsert the added chunks, delete the removed ones, save (after their partition's commit)."""
        index = self.index.get()
        added = chunks.column("chunk_id").to_pylist() if chunks is not None else []
        rows = [p.index_row() for p in self.passages(added)]  # committed already: the live chunks hold them
        if rows:
            index.upsert(rows)
        if removes:
            index.delete(list(removes))
        self.index.save()
        self.write_state()

    def reconcile(self) -> dict[str, int]:
        """Compare the index's ids with the live chunks when the state says it may differ; fix both ways."""
        if self.is_current():
            return {}
        index = self.index.get()
        indexed = {row["id"] for row in index.search("SELECT id FROM txtai", limit=MAX_INDEX_IDS)}
        live = live_chunk_ids(self.chunks_path, self.graph_root)
        missing, extra = sorted(live - indexed), sorted(indexed - live)
        if missing:
            index.upsert([p.index_row() for p in self.passages(missing)])
        if extra:
            index.delete(extra)
        if missing or extra:
            self.index.save()
        self.write_state()
        return {"upserted": len(missing), "deleted": len(extra)}

    def problems(self) -> list[str]:
        if self.is_current():
            return []
        return ["the corpus index is not in line with the documents added and removed (`enrich-rag graph verify --repair` fixes it)"]
