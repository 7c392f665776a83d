"""A large build's vectors encoded in single-threaded processes, one per core (up to `MAX_PROCESSES`).

MiniLM's matrices are small (a graph document is ~23 tokens): one process's two threads encode only
~1.1x what one thread does, two one-thread processes nearly 2x (`bench_results/first_hour_graph_index.json`).
Each process loads the model through txtai's own vectors class, so the vectors are the ones txtai would
compute while indexing (`build_index` then stores them instead of encoding).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from enrich_rag.config import EmbeddingsConfig

MIN_DOCUMENTS = 5000  # below this, starting the processes (~5 s each) costs more than it saves
MAX_PROCESSES = 4

_model: Any = None


def processes_for(documents: int) -> int:
    """How many processes encode this many documents (0: encode in this process, as txtai does)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cores, MAX_PROCESSES) if documents >= MIN_DOCUMENTS and cores > 1 else 0


def _load(config: EmbeddingsConfig) -> None:
    global _model
    import torch

    from enrich_rag.index.embeddings import txtai_config
    from enrich_rag.index.txtai_adapter import vectors_model

    torch.set_num_threads(1)
    _model = vectors_model(txtai_config(config))


def _encode(texts: list[str]) -> np.ndarray:
    from enrich_rag.index.txtai_adapter import encode

    return encode(_model, texts)


def encode_in_processes(texts: list[str], config: EmbeddingsConfig, processes: int) -> np.ndarray:
    """Vectors of `texts`, in their order. Texts go to the processes by length in turn, so each gets as
    many short and long ones (a batch pads to its longest)."""
    by_length = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    shares = [by_length[p::processes] for p in range(processes)]
    context = multiprocessing.get_context("spawn")  # a fork would copy this process's torch threads
    with ProcessPoolExecutor(processes, mp_context=context, initializer=_load, initargs=(config,)) as pool:
        encoded = list(pool.map(_encode, [[texts[i] for i in share] for share in shares]))
    out = np.empty((len(texts), encoded[0].shape[1]), np.float32)
    for share, vectors in zip(shares, encoded):
        out[share] = vectors
    return out
