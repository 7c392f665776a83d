"""Stage `prepare_corpus`: documents -> sentence-bounded chunks in one Parquet file."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from tqdm import tqdm

from enrich_rag.config import Config
from enrich_rag.ingest.documents import read_corpus
from enrich_rag.stages.chunking import chunk_document
from enrich_rag.storage.atomic import write_parquet_atomic
from enrich_rag.storage.schema import CHUNKS


def prepare_corpus(config: Config) -> dict[str, int]:
    docs = read_corpus(config.corpus.source, config.corpus.format, config.corpus.max_passages)
    rows: list[dict[str, Any]] = []
    for doc in tqdm(docs, desc="chunking", unit="doc", mininterval=2.0):
        rows.extend(p.to_row() for p in chunk_document(doc, config.corpus.chunk_size))
    write_parquet_atomic(pa.Table.from_pylist(rows, schema=CHUNKS), config.paths.chunks)
    return {"passages": len(docs), "chunks": len(rows)}
