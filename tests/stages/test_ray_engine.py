"""`build.engine: ray`: the same seed graph and the same index vectors as the local build, on a
local Ray with two workers (real spaCy, real MiniLM, real Ray Data actors), through `file://` URIs
(pyarrow's filesystem layer, the code path of `s3://`), and a worker killed mid-extraction."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from enrich_rag.config import BuildConfig, RayConfig
from enrich_rag.errors import ConfigError
from enrich_rag.stages import ray_engine
from enrich_rag.stages.corpus import prepare_corpus
from enrich_rag.stages.seed_graph import build_seed_graph
from enrich_rag.storage.partitions import committed_partitions, partition_dir
from enrich_rag.storage.schema import SEED_PARTITION

needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="Ray is not installed (pip install -e '.[ray]'; scripts/run.sh installs it)"
)


def _rows(config, table: str) -> set[tuple]:
    graph = Path(config.paths.graph.removeprefix("file://"))
    rows = pq.read_table(partition_dir(graph, table, SEED_PARTITION) / "part-0.parquet").to_pylist()
    return {tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(r.items())) for r in rows}


def _with(config, root, engine: str, retries: int = 2):
    paths = {
        f.name: str(root / getattr(config.paths, f.name).split("/data/", 1)[-1])
        for f in dataclasses.fields(config.paths)
        if f.name != "dvc_root"
    }
    return dataclasses.replace(
        config,
        build=BuildConfig(engine=engine),
        ray=RayConfig(workers=2, retries=retries),
        paths=dataclasses.replace(config.paths, **paths),
        extraction=dataclasses.replace(config.extraction, batch_size=2),
    )


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module, started as a build starts it (`ray_session`); each build here finds it
    running and works on it, as on a cluster given by `ray.address`, instead of starting one of its own."""
    with ray_engine.ray_session(RayConfig(workers=2)) as ray:
        yield ray


@pytest.mark.slow  # starts a local Ray
@needs_ray
def test_ray_build_gives_the_local_graph_and_vectors(small_config, tmp_path, local_ray):
    from enrich_rag.stages.indexes import corpus_documents, precomputed_vectors

    local, distributed = _with(small_config, tmp_path / "local", "local"), _with(small_config, tmp_path / "ray", "ray")
    for config in (local, distributed):
        prepare_corpus(config)
    distributed = _through_uris(distributed)
    for config in (local, distributed):
        build_seed_graph(config)
    assert committed_partitions(distributed.paths.graph) == [SEED_PARTITION]
    for table in ("nodes", "edges", "links"):
        assert _rows(distributed, table) == _rows(local, table), table
        assert _rows(local, table)
    assert not [p for p in Path(tmp_path / "ray").rglob(".tmp-*")]  # nothing staged is left behind

    docs = corpus_documents(distributed)
    vectors = precomputed_vectors(distributed, docs)
    from txtai.vectors import VectorsFactory

    from enrich_rag.index.embeddings import txtai_config

    expected = VectorsFactory.create(txtai_config(local.embeddings), None).vectorize([d["text"] for d in docs])
    assert vectors.shape == expected.shape
    assert np.allclose(vectors, expected, atol=1e-5)  # row i is document i's vector, whichever worker made it


def _through_uris(config):
    """Chunks and graph as `file://` URIs: read and written through pyarrow's filesystems."""
    return dataclasses.replace(
        config, paths=dataclasses.replace(config.paths, chunks="file://" + config.paths.chunks, graph="file://" + config.paths.graph)
    )


def test_the_local_build_reads_and_writes_uris_too(small_config, tmp_path, spacy_extractor):
    local = _with(small_config, tmp_path / "local", "local")
    prepare_corpus(local)
    build_seed_graph(local, extractor=spacy_extractor)
    remote = _through_uris(dataclasses.replace(local, paths=dataclasses.replace(local.paths, graph=str(tmp_path / "store/graph"))))
    assert committed_partitions(remote.paths.graph) == []
    build_seed_graph(remote, extractor=spacy_extractor)
    assert committed_partitions(remote.paths.graph) == [SEED_PARTITION]
    for table in ("nodes", "edges", "links"):
        assert _rows(remote, table) == _rows(local, table), table


class DiesOnce(ray_engine.ExtractBatch):
    """Kills its own worker process (SIGKILL, as the OOM killer does) on its first batch; a marker
    file makes it once per test, whichever actor gets there first."""

    marker = ""

    def __call__(self, batch):
        if not os.path.exists(self.marker):
            Path(self.marker).touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return super().__call__(batch)


@pytest.mark.slow  # starts a local Ray
@needs_ray
@pytest.mark.parametrize("retries", [2, 0])
def test_a_killed_worker_costs_a_retry_or_fails_cleanly_never_half_a_partition(small_config, tmp_path, monkeypatch, retries, local_ray):
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the actors get this test's class
    monkeypatch.setattr(DiesOnce, "marker", str(tmp_path / "died"))
    monkeypatch.setattr(ray_engine, "ExtractBatch", DiesOnce)
    local, distributed = _with(small_config, tmp_path / "local", "local"), _with(small_config, tmp_path / "ray", "ray", retries)
    try:
        for config in (local, distributed):
            prepare_corpus(config)
        build_seed_graph(local)
        if retries:
            build_seed_graph(distributed)  # the dead actor is restarted and its batch run again
            for table in ("nodes", "edges", "links"):
                assert _rows(distributed, table) == _rows(local, table), table
        else:
            with pytest.raises(Exception):  # noqa: B017 - Ray wraps the dead actor in version-dependent error types
                build_seed_graph(distributed)
            assert committed_partitions(distributed.paths.graph) == []
            assert not [p for p in Path(distributed.paths.graph).rglob("*") if p.is_file()]  # not a file written
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert Path(tmp_path / "died").exists()  # a worker did die


def test_an_index_built_from_precomputed_vectors_searches_like_a_local_one(small_config, tmp_path):
    from txtai.vectors import VectorsFactory

    from enrich_rag.index.embeddings import build_index, open_index, search, txtai_config
    from enrich_rag.stages.indexes import corpus_documents

    prepare_corpus(small_config)
    docs = corpus_documents(small_config)
    vectors = VectorsFactory.create(txtai_config(small_config.embeddings), None).vectorize([d["text"] for d in docs])
    build_index(docs, small_config.embeddings, tmp_path / "given", "given", vectors)
    build_index(docs, small_config.embeddings, tmp_path / "encoded", "encoded")
    given, encoded = (open_index(tmp_path / name, small_config.embeddings) for name in ("given", "encoded"))
    for query in ("Who directed Inception?", "river through southern England"):
        assert [h["id"] for h in search(given, query, 3, small_config.embeddings)] == [
            h["id"] for h in search(encoded, query, 3, small_config.embeddings)
        ]
    given.upsert([{"id": "new", "text": "Kemble is a village in Gloucestershire."}])  # encodes as usual afterwards
    assert search(given, "village in Gloucestershire", 1, small_config.embeddings)[0]["id"] == "new"


def test_the_ray_engine_without_ray_is_one_line(small_config, monkeypatch):
    from enrich_rag.stages.ray_engine import import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without the extra sees
    with pytest.raises(ConfigError, match=r"pip install -e \"\.\[ray\]\""):
        import_ray()
