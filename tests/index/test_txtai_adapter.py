"""The txtai internals we rely on (enrich_rag/index/txtai_adapter.py): present in the installed txtai,
and doing what the adapter says, so a txtai upgrade that moves them fails here by name."""

from __future__ import annotations

import numpy as np

from enrich_rag.config import EmbeddingsConfig
from enrich_rag.index.embeddings import new_index, search, txtai_config
from enrich_rag.index.txtai_adapter import encode, internals_problems, precomputed_vectors, replace_encoder, vectors_model

DOCS = [
    {"id": "a", "text": "Christopher Nolan directed Inception."},
    {"id": "b", "text": "The River Thames flows through London."},
    {"id": "c", "text": "Leonardo DiCaprio won an Academy Award."},
]


def test_the_installed_txtai_has_what_the_adapter_swaps():
    assert internals_problems() == []


def test_vectors_from_elsewhere_are_indexed_without_encoding_and_later_upserts_encode_again():
    config = EmbeddingsConfig(hybrid=False)
    vectors = encode(vectors_model(txtai_config(config)), [d["text"] for d in DOCS])
    assert vectors.shape == (3, 384)
    index, asked = new_index(config)._embeddings, []
    by_text = dict(zip((d["text"] for d in DOCS), vectors))

    def lookup(texts):
        asked.extend(texts)
        return np.stack([by_text[t] for t in texts])

    with precomputed_vectors(index, lookup):
        index.index(DOCS)
    assert sorted(asked) == sorted(d["text"] for d in DOCS)
    assert search(index, "who directed Inception", 1, config)[0]["id"] == "a"
    index.upsert([{"id": "d", "text": "Kemble is a village in Gloucestershire."}])  # encoded by txtai again
    assert len(asked) == 3 and search(index, "village in Gloucestershire", 1, config)[0]["id"] == "d"


def test_a_replaced_encoder_sees_every_query_of_that_index_only():
    config = EmbeddingsConfig(hybrid=False)
    first, second = new_index(config)._embeddings, new_index(config)._embeddings
    first.index(DOCS)
    second.index(DOCS)
    seen = []

    def wrap(encode_):
        def spy(data, category=None):
            seen.append((list(data), category))
            return encode_(data, category)

        return spy

    replace_encoder(first, wrap)
    search(first, "Thames", 1, config)
    search(second, "Thames", 1, config)
    assert [data for data, _ in seen] == [["Thames"]]
