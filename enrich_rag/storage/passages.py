"""Passages: the one type a chunk of text has from chunking to citations, and how online code looks them up.

A chunk is written once by the `prepare_corpus` stage (`chunks.parquet`, column `chunk_id` for `id`),
indexed, extracted, retrieved, ranked and cited: each of those steps reads and hands on a `Passage`.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow.fs import FileType

from enrich_rag.errors import StorageError
from enrich_rag.storage.schema import CHUNKS
from enrich_rag.storage.uris import is_uri, open_uri

if TYPE_CHECKING:
    from enrich_rag.storage.corpus_changes import DocumentEntry


@dataclass(frozen=True)
class Passage:
    id: str
    doc_id: str
    title: str
    text: str
    section: str = ""
    position: int = 0
    partition: str = ""  # the graph partition whose facts it backs, where it came through the graph
    score: float = 0.0  # retrieval score, normalised per search

    @property
    def content(self) -> str:
        """Title and text, as DPR indexes a passage: many passages never repeat their subject."""
        return f"{self.title}: {self.text}" if self.title else self.text

    def scored(self, score: float) -> Passage:
        return dataclasses.replace(self, score=float(score))

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Passage:
        return cls(row["chunk_id"], row["doc_id"], row["title"] or "", row["text"], row.get("section") or "", int(row.get("position") or 0))

    def index_row(self) -> dict[str, Any]:
        """The corpus index's row for this chunk (search text: title and text)."""
        return {"id": self.id, "text": self.content, "title": self.title, "doc_id": self.doc_id}

    def to_row(self) -> dict[str, Any]:
        return {
            "chunk_id": self.id,
            "doc_id": self.doc_id,
            "title": self.title,
            "section": self.section,
            "position": self.position,
            "text": self.text,
        }


def read_chunks(path: Path | str) -> pa.Table:
    """From a local path, or an object-store URI (storage/uris.py) on a cluster build."""
    if is_uri(path):
        fs, where = open_uri(str(path))
        if fs.get_file_info(where).type != FileType.File:
            raise StorageError(f"no chunks at {path} (run the prepare_corpus stage first)")
        return pq.read_table(where, filesystem=fs, schema=CHUNKS)
    path = Path(path)
    if not path.is_file():
        raise StorageError(f"no chunks at {path} (run the prepare_corpus stage first)")
    return pq.read_table(path, schema=CHUNKS)


def read_passages(path: Path | str) -> list[Passage]:
    return [Passage.from_row(r) for r in read_chunks(path).to_pylist()]


class PassageStore:
    """Chunks by id for online code, from an indexed in-memory DuckDB table.

    The agent looks chunks up several times per question and a Parquet scan costs ~40 ms each; the
    table is loaded once and reloaded when the file changes (a rebuilt corpus). With `graph_root`, the
    corpus is the built chunks plus the chunks of documents added since, less those removed (the graph's
    partitions carry both, `storage/corpus_changes.py`), so a removed passage is never found again.
    Thread-safe: the web server answers on a thread pool.
    """

    def __init__(self, path: Path | str, graph_root: Path | str | None = None):
        self.path = Path(path)
        self.graph_root = Path(graph_root) if graph_root is not None else None
        self._lock = threading.Lock()
        self._con = None
        self._signature: tuple | None = None
        self._version: tuple | None = None

    def _current(self) -> tuple:
        from enrich_rag.storage.corpus_changes import changes_signature
        from enrich_rag.storage.partitions import graph_version

        try:
            stat = self.path.stat()
        except FileNotFoundError as exc:
            raise StorageError(f"no chunks at {self.path} (run the prepare_corpus stage first)") from exc
        if self.graph_root is None:
            return (stat.st_mtime_ns, stat.st_size)
        version = graph_version(self.graph_root)
        if version == self._version and self._signature and self._signature[:2] == (stat.st_mtime_ns, stat.st_size):
            return self._signature  # the graph did not move: no partition listing
        self._version = version
        return (stat.st_mtime_ns, stat.st_size, changes_signature(self.graph_root))

    def _table(self):
        import duckdb

        signature = self._current()
        if signature != self._signature:
            from enrich_rag.storage.corpus_changes import live_chunks_sql

            con = duckdb.connect()
            sql, params = live_chunks_sql(self.path, self.graph_root)
            con.execute(f"CREATE TABLE chunks AS {sql}", params)
            con.execute("CREATE INDEX chunks_id ON chunks (chunk_id)")
            if self._con is not None:
                self._con.close()
            self._con, self._signature = con, signature
        return self._con

    def by_ids(self, ids: list[str]) -> list[Passage]:
        """The passages found, in id order (unknown ids are skipped)."""
        return self._where("chunk_id", ids)

    def by_doc_ids(self, doc_ids: list[str]) -> list[Passage]:
        """Every chunk of these documents, in chunk-id order."""
        return self._where("doc_id", doc_ids)

    def by_titles(self, titles: list[str]) -> list[Passage]:
        """Every chunk of the pages with these titles, in chunk-id order."""
        return self._where("title", titles)

    def _where(self, column: str, values: list[str]) -> list[Passage]:
        if not values:
            return []
        with self._lock:
            cursor = self._table().execute(
                f"SELECT * FROM chunks WHERE {column} IN (SELECT unnest(?::VARCHAR[])) ORDER BY chunk_id", [list(values)]
            )
            columns = [d[0] for d in cursor.description]
            return [Passage.from_row(dict(zip(columns, row))) for row in cursor.fetchall()]

    def containing(self, phrases: list[str]) -> list[Passage]:
        """Chunks whose text writes any of these phrases word for word (one scan), in chunk-id order."""
        if not phrases:
            return []
        with self._lock:
            cursor = self._table().execute(
                "SELECT * FROM chunks WHERE len(list_filter(?::VARCHAR[], lambda p: contains(text, p))) > 0 ORDER BY chunk_id",
                [list(phrases)],
            )
            columns = [d[0] for d in cursor.description]
            return [Passage.from_row(dict(zip(columns, row))) for row in cursor.fetchall()]

    def sectioned_share(self) -> float:
        """The share of chunks under a section heading other than their page's title: near 1 for
        documentation pages, 0 for a corpus of titled paragraphs (Wikipedia-style passages)."""
        with self._lock:
            row = self._table().execute("SELECT avg(CASE WHEN section <> '' AND section <> title THEN 1 ELSE 0 END) FROM chunks").fetchall()
        return float(row[0][0] or 0.0)

    def signature(self) -> tuple:
        """Changes whenever the live chunks do (the chunks file, an added or removed document): a key for
        what is built from them, checked without a query."""
        with self._lock:
            self._table()  # brought up to date first: `_current` alone would mark a graph change as seen
            return self._signature or ()

    def titles(self) -> list[str]:
        with self._lock:
            return [row[0] for row in self._table().execute("SELECT DISTINCT title FROM chunks ORDER BY title").fetchall()]

    def documents(self) -> list[DocumentEntry]:
        """Every document the corpus has held (built, added, removed), with its live chunk count."""
        from enrich_rag.storage.corpus_changes import DocumentEntry, documents

        if self.graph_root is None:
            with self._lock:
                cursor = self._table().execute("SELECT doc_id, any_value(title), count(*) FROM chunks GROUP BY doc_id ORDER BY doc_id")
                return [DocumentEntry(d, t, n, origin="build", status="built") for d, t, n in cursor.fetchall()]
        return documents(self.path, self.graph_root)

    def get(self, passage_id: str) -> Passage | None:
        found = self.by_ids([passage_id])
        return found[0] if found else None

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con, self._signature = None, None


def normalised(hits: list[Passage]) -> list[Passage]:
    """Scores relative to the best hit, in [0, 1]: one search's scores on a scale another can share."""
    top = max((h.score for h in hits), default=0.0)
    return [h.scored(h.score / top if top > 0 else 0.0) for h in hits]
