"""Stage `build_seed_graph`: run the configured extractor over every chunk into partition `seed`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

import pyarrow as pa
from tqdm import tqdm

from enrich_rag.build.corpus import read_chunks
from enrich_rag.config import Config
from enrich_rag.extract.assemble import graph_tables
from enrich_rag.extract.base import ChunkInput, Extraction, Extractor
from enrich_rag.extract.factory import make_extractor
from enrich_rag.storage.partitions import write_partition
from enrich_rag.storage.schema import SEED_PARTITION


def chunk_inputs(chunks: pa.Table) -> list[ChunkInput]:
    return [
        ChunkInput(r["chunk_id"], r["doc_id"], r["title"], r["text"])
        for r in chunks.select(["chunk_id", "doc_id", "title", "text"]).to_pylist()
    ]


def extract_all(extractor: Extractor, chunks: list[ChunkInput], batch_size: int, label: str = "extracting") -> Extraction:
    """Map the pure `extract` over batches; this loop is what a cluster engine would distribute."""
    out = Extraction()
    with tqdm(total=len(chunks), desc=label, unit="chunk", mininterval=2.0) as bar:
        for start in range(0, len(chunks), batch_size):
            batch = chunks[start : start + batch_size]
            out.extend(extractor.extract(batch))
            bar.update(len(batch))
    return out


def write_graph_partition(
    graph_root: Path | str, partition: str, extraction: Extraction
) -> tuple[pa.Table, pa.Table]:
    nodes, edges = graph_tables(extraction)
    write_partition(Path(graph_root), partition, nodes, edges)
    return nodes, edges


def in_seed(chunk_id: str, share: float) -> bool:
    """Stable choice of the seed's chunks: the same chunk is in or out on every build."""
    return share >= 1 or int(hashlib.sha1(chunk_id.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def build_seed_graph(config: Config, extractor: Extractor | None = None, chunks: Iterable[ChunkInput] | None = None) -> dict[str, int]:
    extractor = extractor or make_extractor(config.extraction)
    inputs = list(chunks) if chunks is not None else chunk_inputs(read_chunks(config.paths.chunks))
    inputs = [c for c in inputs if in_seed(c.chunk_id, config.extraction.seed_share)]
    extraction = extract_all(extractor, inputs, config.extraction.batch_size)
    nodes, edges = write_graph_partition(config.paths.graph, SEED_PARTITION, extraction)
    return {"chunks": len(inputs), "nodes": nodes.num_rows, "edges": edges.num_rows}
