"""The one place that reaches inside txtai (pinned in pyproject.toml), for what its public API lacks.

txtai encodes inside its own objects, and we need two things it offers no switch for: a query's
vector shared across indexes (`QueryVectors`), and an index built from vectors computed elsewhere
(the Ray engine). Both swap txtai's encode step, `Vectors.vectorize(data, category)`, on one index's
vectors model. `internals_problems()` lists what of this has changed in the installed txtai; a test
runs it, so an upgrade that moves these fails with a line naming what moved, not deep in a search.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

Encode = Callable[[list, Any], np.ndarray]  # (data, category) -> one row per item


def vectors_model(config: dict[str, Any]) -> Any:
    """txtai's own vectors class for an index config: encodes exactly as an index built with it does."""
    from txtai.vectors import VectorsFactory

    return VectorsFactory.create(config, None)


def encode(model: Any, texts: list[str]) -> np.ndarray:
    return np.asarray(model.vectorize(texts), dtype=np.float32)


def replace_encoder(embeddings: Any, wrap: Callable[[Encode], Encode]) -> None:
    """Encode with `wrap(txtai's encoder)` from now on, for this index only (`embeddings`: a loaded
    txtai Embeddings)."""
    model = embeddings.model
    model.vectorize = wrap(model.vectorize)


@contextmanager
def precomputed_vectors(embeddings: Any, lookup: Callable[[list[str]], np.ndarray]) -> Iterator[None]:
    """While indexing, take each text's vector from `lookup` instead of encoding it. txtai creates its
    vectors model inside `index` (`initindex`), so the swap happens there; both are put back after, so
    later upserts encode as usual."""
    create = embeddings.initindex

    def initindex(reindex: bool) -> None:
        create(reindex)
        embeddings.model.vectorize = lambda texts, category=None: lookup(texts)

    embeddings.initindex = initindex
    try:
        yield
    finally:
        del embeddings.initindex
        if embeddings.model is not None and "vectorize" in vars(embeddings.model):
            del embeddings.model.vectorize


def internals_problems() -> list[str]:
    """What this module relies on that the installed txtai no longer has, one line each."""
    from txtai import Embeddings
    from txtai.vectors import Vectors, VectorsFactory

    expected = [
        (Embeddings, "initindex", ["self", "reindex"]),
        (Vectors, "vectorize", ["self", "data", "category"]),
        (VectorsFactory, "create", ["config", "scoring", "models"]),
    ]
    problems = []
    for owner, name, params in expected:  # owner: a class whose method this module swaps or calls
        function = getattr(owner, name, None)
        if function is None:
            problems.append(f"txtai's {owner.__name__}.{name} is gone")
            continue
        found = list(inspect.signature(function).parameters)[: len(params)]
        if found != params:
            problems.append(f"txtai's {owner.__name__}.{name} takes {found}, not {params}")
    return problems
