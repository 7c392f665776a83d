"""Shared fixtures: real spaCy, real MiniLM, a small corpus written by the test into tmp dirs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from enrich_rag.config import Config, CorpusConfig, ExtractionConfig, LLMConfig, load_config
from enrich_rag.storage.dvc_tracking import DvcRepo

PROJECT_ROOT = Path(__file__).resolve().parents[1]


# Fixtures that load a real language model: the embedded Gemma here, llama.cpp readers in the
# llama.cpp and test-set modules.
MODEL_FIXTURES = {"embedded_llm", "llama", "reader"}
# Fixtures that build real txtai indexes and DVC repositories (each `dvc` call is a ~1 s process).
BUILD_FIXTURES = {"built_small", "gap_config", "world", "small_build"}


def pytest_collection_modifyitems(items):
    """A test that loads a real model is slow, one that builds indexes or a DVC repository is an
    integration test; `scripts/run.sh fast` runs neither, `scripts/run.sh test` (CI) runs all."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if MODEL_FIXTURES & fixtures:
            item.add_marker(pytest.mark.slow)
        if BUILD_FIXTURES & fixtures:
            item.add_marker(pytest.mark.integration)


SMALL_CORPUS = [
    {
        "id": "inception",
        "title": "Inception",
        "text": "Inception is a 2010 science fiction film. Christopher Nolan directed Inception. "
        "The film stars Leonardo DiCaprio as a thief who steals corporate secrets.",
    },
    {
        "id": "nolan",
        "title": "Christopher Nolan",
        "text": "Christopher Nolan is a British-American film director. Nolan was born in London in 1970. "
        "He studied English literature at University College London.",
    },
    {
        "id": "london",
        "title": "London",
        "text": "London is the capital city of England and the United Kingdom. It stands on the River Thames.",
    },
    {
        "id": "thames",
        "title": "River Thames",
        "text": "The River Thames flows through southern England. Its source is near Kemble in Gloucestershire.",
    },
    {
        "id": "dicaprio",
        "title": "Leonardo DiCaprio",
        "text": "Leonardo DiCaprio is an American actor. DiCaprio won the Academy Award for Best Actor in 2016.",
    },
]


@pytest.fixture(scope="session")
def nlp():
    from enrich_rag.extract.spacy_extractor import load_spacy

    return load_spacy(ExtractionConfig().spacy_model)


@pytest.fixture(scope="session")
def spacy_extractor(nlp):
    from enrich_rag.extract.spacy_extractor import SpacyExtractor

    return SpacyExtractor(ExtractionConfig(), nlp=nlp)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def small_config(tmp_path: Path) -> Config:
    """The project's params.yaml, pointed at a five-document corpus and a temp data dir."""
    source = write_jsonl(tmp_path / "corpus.jsonl", SMALL_CORPUS)
    base = load_config(PROJECT_ROOT / "params.yaml")
    config = dataclasses.replace(
        base,
        corpus=CorpusConfig(source=str(source), format="jsonl", chunk_size=400),
        llm=dataclasses.replace(base.llm, backend="embedded"),  # the agent tests read with Gemma 270M (`embedded_llm`)
        # They enrich with spaCy (`spacy_extractor`); the LLM extractor's own tests set deep="llm".
        extraction=dataclasses.replace(base.extraction, deep="spacy"),
        paths=dataclasses.replace(
            base.paths,
            root=str(tmp_path / "data"),
            chunks=str(tmp_path / "data/corpus/chunks.parquet"),
            corpus_index=str(tmp_path / "data/indexes/corpus"),
            graph=str(tmp_path / "data/graph"),
            graph_index=str(tmp_path / "data/indexes/graph"),
            build_summary=str(tmp_path / "data/build_summary.json"),
        ),
    )
    return config


@pytest.fixture
def built_small(small_config, spacy_extractor):
    """Run the real offline stages on the small corpus (shared spaCy so the model loads once)."""
    from enrich_rag.stages.corpus import prepare_corpus
    from enrich_rag.stages.indexes import build_corpus_index, build_graph_index
    from enrich_rag.stages.seed_graph import build_seed_graph

    prepare_corpus(small_config)
    build_corpus_index(small_config)
    build_seed_graph(small_config, extractor=spacy_extractor)
    build_graph_index(small_config)
    return small_config


@pytest.fixture(scope="session")
def embedded_llm():
    from enrich_rag.llm.factory import make_llm

    # Gemma 270M through transformers: the small model the real-model tests run on. The first run
    # dequantises the shipped GGUF (~60 s) and caches it; later runs load in seconds.
    return make_llm(LLMConfig(backend="embedded"))


@pytest.fixture
def gap_config(small_config, spacy_extractor, tmp_path):
    """Corpus and indexes cover every passage; the seed graph leaves out the Christopher Nolan page."""
    from enrich_rag.stages.corpus import prepare_corpus
    from enrich_rag.stages.indexes import build_corpus_index, build_graph_index
    from enrich_rag.stages.seed_graph import build_seed_graph
    from enrich_rag.storage.passages import read_passages

    config = dataclasses.replace(small_config, paths=dataclasses.replace(small_config.paths, dvc_root=str(tmp_path)))
    prepare_corpus(config)
    build_corpus_index(config)
    chunks = [c for c in read_passages(config.paths.chunks) if c.doc_id != "nolan"]
    build_seed_graph(config, extractor=spacy_extractor, chunks=chunks)
    build_graph_index(config)
    DvcRepo(tmp_path).init()
    return config


def make_agent(resources, agent=None, evidence=None):
    """The loop as a unit over resources a test assembled (a scripted reader, a given extractor); the
    product builds its agents in one place, `EnrichRAG.agent`."""
    from enrich_rag.agent.loop import Agent

    return Agent(resources, agent or resources.config.agent, evidence or resources.config.evidence)
