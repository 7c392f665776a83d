"""Stage `prepare_corpus`: documents -> sentence-bounded chunks in one Parquet file."""

from __future__ import annotations

import dataclasses
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


def chunks_by_ids(path: Path | str, chunk_ids: list[str]) -> list[dict]:
    if not chunk_ids:
        return []
    import duckdb

    with duckdb.connect() as con:
        cursor = con.execute(
            "SELECT * FROM read_parquet(?) WHERE chunk_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY chunk_id",
            [str(path), list(chunk_ids)],
        )
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row)) for row in cursor.fetchall()]


def read_chunks(path: Path | str) -> pa.Table:
    path = Path(path)
    if not path.is_file():
        raise StorageError(f"no chunks at {path} (run the prepare_corpus stage first)")
    return pq.read_table(path, schema=CHUNKS)
