"""A large build's vectors from one-thread processes are txtai's own vectors, in the texts' order."""

import numpy as np
import pytest

from enrich_rag.config import EmbeddingsConfig


@pytest.mark.integration  # starts two processes that load MiniLM
def test_processes_encode_what_txtai_encodes_in_the_texts_order():
    from enrich_rag.index.embeddings import txtai_config
    from enrich_rag.index.encode_processes import encode_in_processes
    from enrich_rag.index.txtai_adapter import encode, vectors_model

    config = EmbeddingsConfig()
    texts = [f"{name} directed {film}" for name in ("Christopher Nolan", "Greta Gerwig", "Ang Lee") for film in ("a film", "Inception")]
    texts += ["London", "a much longer text about where the director of Inception was born and raised, and what he studied"]
    vectors = encode_in_processes(texts, config, processes=2)
    alone = encode(vectors_model(txtai_config(config)), texts)
    assert vectors.shape == alone.shape
    assert np.abs(vectors - alone).max() < 1e-4  # the same vectors (threads may round the last bits differently)
    assert [int(np.argmax(alone @ v)) for v in vectors] == list(range(len(texts)))  # each where its text is


def test_only_a_large_build_on_several_cores_uses_processes(monkeypatch):
    from enrich_rag.index import encode_processes

    monkeypatch.setattr(encode_processes.os, "sched_getaffinity", lambda _: {0, 1}, raising=False)
    assert encode_processes.processes_for(100) == 0
    assert encode_processes.processes_for(encode_processes.MIN_DOCUMENTS) == 2
    monkeypatch.setattr(encode_processes.os, "sched_getaffinity", lambda _: set(range(64)), raising=False)
    assert encode_processes.processes_for(10**6) == encode_processes.MAX_PROCESSES
    monkeypatch.setattr(encode_processes.os, "sched_getaffinity", lambda _: {0}, raising=False)
    assert encode_processes.processes_for(10**6) == 0
