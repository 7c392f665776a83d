"""The offline build's map steps on Ray Data: extraction and embedding on actor pools.

Only the map steps move: each actor loads spaCy (or REBEL) or the embedder once and maps batches of
chunks, exactly the pure functions the local build loops over. The reduce (`extract/assemble.py`)
and the writes stay on the driver, through the same atomic partition commit and index save, so a
dead worker can cost a retry but never leave half a partition. Rows come back tagged with their
chunk and their order within it, and the reduce reads them in that canonical order, as the local
build does: the graph is the same whatever the batch order or the number of workers.

Nothing here is imported unless `build.engine` is `ray`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa

from enrich_rag.config import Config, EmbeddingsConfig, ExtractionConfig, RayConfig
from enrich_rag.errors import ConfigError
from enrich_rag.extract.base import Extraction, Mention
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge

MENTION, EDGE = "mention", "edge"


def import_ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise ConfigError("build.engine is 'ray' but Ray is not installed: pip install -e \".[ray]\"") from exc
    return ray


@contextmanager
def ray_session(settings: RayConfig) -> Iterator[Any]:
    """Join the configured cluster, or start a local Ray for `workers` actors; stop only what we started."""
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        if settings.address:
            ray.init(address=settings.address, log_to_driver=False)
        else:
            # One CPU beyond the actors: with every CPU held by an actor, the read tasks feeding them
            # never get scheduled and the job waits forever (measured: a hang at 2 actors on 2 CPUs).
            ray.init(num_cpus=settings.workers + 1, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def _actor_options(ray, settings: RayConfig) -> dict[str, Any]:
    # A fixed pool of `workers` actors; Ray remote options go in as keywords: a dead actor is
    # restarted and its batch resubmitted, up to `retries` times.
    return {
        "compute": ray.data.ActorPoolStrategy(size=settings.workers),
        "batch_format": "pyarrow",
        "max_restarts": settings.retries,
        "max_task_retries": settings.retries,
    }


class ExtractBatch:
    """One actor: loads the extractor once, then maps batches of chunk rows to mention and edge rows,
    each tagged with its chunk and its order within the chunk."""

    def __init__(self, extraction: ExtractionConfig):
        from enrich_rag.extract.factory import make_extractor

        self.extractor = make_extractor(extraction)
        self.share = extraction.seed_share

    def __call__(self, batch: pa.Table) -> pa.Table:
        from enrich_rag.stages.seed_share import in_seed

        passages = [p for p in (Passage.from_row(row) for row in batch.to_pylist()) if in_seed(p.id, self.share)]
        out = self.extractor.extract(passages) if passages else Extraction()
        seq: dict[tuple[str, str], int] = {}
        columns: dict[str, list] = {"chunk_id": [], "kind": [], "seq": [], "payload": []}
        for kind, item in [(MENTION, m) for m in out.mentions] + [(EDGE, e) for e in out.edges]:
            key = (kind, item.chunk_id)
            seq[key] = seq.get(key, -1) + 1
            for column, value in zip(columns, (item.chunk_id, kind, seq[key], json.dumps(dataclasses.asdict(item)))):
                columns[column].append(value)
        return pa.table(
            {
                "chunk_id": pa.array(columns["chunk_id"], pa.string()),
                "kind": pa.array(columns["kind"], pa.string()),
                "seq": pa.array(columns["seq"], pa.int64()),
                "payload": pa.array(columns["payload"], pa.string()),
            }
        )


BLOCKS_PER_WORKER = 4  # a one-file chunk table reads as one block, which only one actor would get


def read_chunks_dataset(ray, config: Config):
    """The chunk table as a Ray Dataset, straight from its Parquet file (a path or a pyarrow URI),
    cut into blocks enough for every actor."""
    return ray.data.read_parquet(config.paths.chunks).repartition(config.ray.workers * BLOCKS_PER_WORKER)


def extract_on_ray(config: Config) -> Extraction:
    """The seed share of the chunks, extracted on `ray.workers` actors; rows in the canonical order
    (chunk id, then order within the chunk) that `graph_tables` reduces in."""
    with ray_session(config.ray) as ray:
        dataset = read_chunks_dataset(ray, config).map_batches(
            ExtractBatch,
            fn_constructor_args=(config.extraction,),
            batch_size=config.extraction.batch_size,
            **_actor_options(ray, config.ray),
        )
        rows = [r for batch in dataset.iter_batches(batch_format="pyarrow") for r in batch.to_pylist()]
    rows.sort(key=lambda r: (r["chunk_id"], r["seq"]))
    mentions = [Mention(**json.loads(r["payload"])) for r in rows if r["kind"] == MENTION]
    edges = [Edge(**json.loads(r["payload"])) for r in rows if r["kind"] == EDGE]
    return Extraction(mentions, edges)


class EmbedBatch:
    """One actor: loads the embedder through txtai's own vectors class once, so its vectors are the
    ones a local index build computes."""

    def __init__(self, embeddings: EmbeddingsConfig):
        from enrich_rag.index.embeddings import txtai_config
        from enrich_rag.index.txtai_adapter import vectors_model

        self.model = vectors_model(txtai_config(embeddings))

    def __call__(self, batch: pa.Table) -> pa.Table:
        from enrich_rag.index.txtai_adapter import encode

        vectors = encode(self.model, batch.column("text").to_pylist())
        return pa.table(
            {
                "rank": batch.column("rank"),
                "vector": pa.FixedSizeListArray.from_arrays(np.asarray(vectors, np.float32).ravel(), vectors.shape[1]),
            }
        )


def embed_on_ray(config: Config, texts: list[str]) -> np.ndarray:
    """Vectors of `texts`, in their order."""
    with ray_session(config.ray) as ray:
        table = pa.table({"rank": pa.array(range(len(texts)), pa.int64()), "text": texts})
        dataset = (
            ray.data.from_arrow(table)
            .repartition(config.ray.workers * BLOCKS_PER_WORKER)
            .map_batches(
                EmbedBatch,
                fn_constructor_args=(config.embeddings,),
                batch_size=config.embeddings.batch_size,
                **_actor_options(ray, config.ray),
            )
        )
        batches = list(dataset.iter_batches(batch_format="pyarrow"))
    ranks = np.concatenate([b.column("rank").to_numpy() for b in batches]) if batches else np.zeros(0, np.int64)
    vectors = (
        np.concatenate([np.stack(b.column("vector").to_numpy(zero_copy_only=False)) for b in batches])
        if batches
        else np.zeros((0, 0), np.float32)
    )
    out = np.empty_like(vectors)
    out[ranks] = vectors
    return out
