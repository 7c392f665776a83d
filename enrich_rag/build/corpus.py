"""Stage `prepare_corpus`: documents -> sentence-bounded chunks in one Parquet file."""

from __future__ import annotations

import dataclasses
import threading
from functools import lru_cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from enrich_rag.build.chunking import chunk_document
from enrich_rag.config import Config
from enrich_rag.errors import StorageError
from enrich_rag.ingest.documents import read_corpus
from enrich_rag.storage.atomic import write_parquet_atomic
from enrich_rag.storage.schema import CHUNKS


def prepare_corpus(config: Config) -> dict[str, int]:
    docs = read_corpus(config.corpus.source, config.corpus.format, config.corpus.max_passages)
    rows = []
    for doc in tqdm(docs, desc="chunking", unit="doc", mininterval=2.0):
        rows.extend(dataclasses.asdict(c) for c in chunk_document(doc, config.corpus.chunk_size))
    write_parquet_atomic(pa.Table.from_pylist(rows, schema=CHUNKS), config.paths.chunks)
    return {"passages": len(docs), "chunks": len(rows)}


@lru_cache(maxsize=8)
def _chunk_table(path: str, mtime_ns: int, size: int):
    """The chunks loaded once into an indexed in-memory DuckDB table: the agent looks chunks up several
    times per question, and scanning the Parquet file each time cost ~40 ms a lookup. Keyed on the
    file's mtime and size, so a rebuilt corpus is read afresh."""
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE chunks AS SELECT * FROM read_parquet(?)", [path])
    con.execute("CREATE INDEX chunks_id ON chunks (chunk_id)")
    return con, threading.Lock()


def chunks_by_ids(path: Path | str, chunk_ids: list[str]) -> list[dict]:
    if not chunk_ids:
        return []
    path = Path(path)
    if not path.is_file():
        raise StorageError(f"no chunks at {path} (run the prepare_corpus stage first)")
    stat = path.stat()
    con, lock = _chunk_table(str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    with lock:
        cursor = con.execute(
            "SELECT * FROM chunks WHERE chunk_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY chunk_id", [list(chunk_ids)])
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row)) for row in cursor.fetchall()]


def read_chunks(path: Path | str) -> pa.Table:
    path = Path(path)
    if not path.is_file():
        raise StorageError(f"no chunks at {path} (run the prepare_corpus stage first)")
    return pq.read_table(path, schema=CHUNKS)
