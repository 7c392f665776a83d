"""Shared fixtures: real spaCy, real MiniLM, a small corpus written by the test into tmp dirs."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest

from enrich_rag.config import Config, CorpusConfig, ExtractionConfig, LLMConfig, load_config
from enrich_rag.storage.dvc_tracking import DvcRepo
from enrich_rag.storage.graph_store import STORE_DIR

PROJECT_ROOT = Path(__file__).resolve().parents[1]


# Fixtures that load a real language model, each once a session: Gemma 270M on transformers and on
# llama.cpp, and the default reader (Qwen2.5 1.5B on llama.cpp).
MODEL_FIXTURES = {"embedded_llm", "gemma_llamacpp", "default_reader"}
# Fixtures that build real txtai indexes and DVC repositories (each `dvc` call is a process of its own).
BUILD_FIXTURES = {"built_small", "gap_config", "world", "small_build", "gap_build", "bridge_config"}


# llama.cpp and torch run their threads on OpenMP (libgomp), whose threads spin while they wait for each
# other: beside another busy process (the other test worker, a server the test started) a spinning thread
# holds a core the other needs. Passive waiting sleeps instead; set before either library loads, and
# inherited by the processes the tests start.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(autouse=True)
def answers_follow_the_diagram(monkeypatch):
    """Every answer the loop gives in any test takes only the arrows the README's diagram draws
    (`agent/loop.py` `STAGES`, which the diagram is generated from): a step added to the loop and not to
    the diagram fails the test that first runs it."""
    from enrich_rag.agent.loop import Agent, follows_stages

    answer = Agent.answer

    def checked(self, question, **options):
        given = answer(self, question, **options)
        assert follows_stages(given.trace.step_names()), f"steps the diagram does not draw: {given.trace.step_names()}"
        return given

    monkeypatch.setattr(Agent, "answer", checked)


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


def small_config_at(root: Path) -> Config:
    """The project's params.yaml, pointed at a five-document corpus and a data dir under `root`."""
    source = write_jsonl(root / "corpus.jsonl", SMALL_CORPUS)
    base = load_config(PROJECT_ROOT / "params.yaml")
    return dataclasses.replace(
        base,
        corpus=CorpusConfig(source=str(source), format="jsonl", chunk_size=400),
        llm=dataclasses.replace(base.llm, backend="embedded"),  # the agent tests read with Gemma 270M (`embedded_llm`)
        # They enrich with spaCy (`spacy_extractor`); the LLM extractor's own tests set deep="llm".
        extraction=dataclasses.replace(base.extraction, deep="spacy"),
        paths=dataclasses.replace(
            base.paths,
            root=str(root / "data"),
            chunks=str(root / "data/corpus/chunks.parquet"),
            corpus_index=str(root / "data/indexes/corpus"),
            graph=str(root / "data/graph"),
            graph_index=str(root / "data/indexes/graph"),
            build_summary=str(root / "data/build_summary.json"),
        ),
    )


@pytest.fixture
def small_config(tmp_path: Path) -> Config:
    return small_config_at(tmp_path)


def build_small(config: Config, extractor, leave_out: str | None = None) -> None:
    """The real offline stages on the small corpus; `leave_out`: a document the seed graph skips."""
    from enrich_rag.stages.corpus import prepare_corpus
    from enrich_rag.stages.indexes import build_corpus_index, build_graph_index
    from enrich_rag.stages.seed_graph import build_seed_graph
    from enrich_rag.storage.passages import read_passages

    prepare_corpus(config)
    build_corpus_index(config)
    chunks = [c for c in read_passages(config.paths.chunks) if c.doc_id != leave_out]
    build_seed_graph(config, extractor=extractor, chunks=chunks)
    build_graph_index(config)


def copy_build(template: Path, root: Path, graph: str) -> None:
    """A test's own copy of a session's build: every file, byte for byte, where the test's config
    (`small_config_at(root)`, its graph at `graph`) looks for it. A copy is milliseconds where a build is seconds. The graph's
    `.store` (a DuckDB file derived from the Parquet, keyed by the files' inodes, never versioned) is not
    copied but derived again, as the build's graph-index stage derives it."""
    from enrich_rag.storage.graph_store import GraphStore

    shutil.copytree(template, root, dirs_exist_ok=True, symlinks=True, ignore=shutil.ignore_patterns(STORE_DIR))
    GraphStore(graph).close()


@pytest.fixture(scope="session")
def small_build(tmp_path_factory, spacy_extractor) -> Path:
    """The small corpus built once a session; `built_small` hands each test a copy."""
    root = tmp_path_factory.mktemp("small_build")
    build_small(small_config_at(root), spacy_extractor)
    return root


@pytest.fixture
def built_small(small_build, small_config, tmp_path):
    """The real offline stages' outputs on the small corpus, the test's own copy."""
    copy_build(small_build, tmp_path, small_config.paths.graph)
    return small_config


@pytest.fixture(scope="session")
def embedded_llm():
    from enrich_rag.llm.factory import make_llm

    # Gemma 270M through transformers: the small model the real-model tests run on. The first run
    # dequantises the shipped GGUF (~60 s) and caches it; later runs load in seconds.
    return make_llm(LLMConfig(backend="embedded"))


def llamacpp_config(**settings) -> LLMConfig:
    """A llama.cpp reader's settings for a test: the shared model cache and `threads: 0` (a thread per core;
    OpenMP waits passively in the tests, see `OMP_WAIT_POLICY` above)."""
    return LLMConfig(backend="llamacpp", cache_dir=str(Path(LLMConfig().cache_dir).expanduser()), **settings)


@pytest.fixture(scope="session")
def gemma_llamacpp():
    """Gemma 270M on llama.cpp, for the tests about that runtime (its tokens, cache, grammar, listener)."""
    from enrich_rag.llm.factory import make_llm

    return make_llm(llamacpp_config(model="gemma-270m"))


@pytest.fixture(scope="session")
def default_reader():
    """The default reader (`llm.model` unset: Qwen2.5-Coder 1.5B Instruct on llama.cpp), for the tests
    about its words."""
    from enrich_rag.llm.factory import make_llm

    return make_llm(llamacpp_config())


@pytest.fixture(scope="session")
def gap_build(tmp_path_factory, spacy_extractor) -> Path:
    """Built once a session: corpus and indexes cover every passage, the seed graph leaves out the
    Christopher Nolan page; a real DVC repository (`dvc init`) at the root."""
    root = tmp_path_factory.mktemp("gap_build")
    build_small(small_config_at(root), spacy_extractor, leave_out="nolan")
    DvcRepo(root).init()
    return root


@pytest.fixture
def gap_config(gap_build, small_config, tmp_path):
    """The gap build (`gap_build`), the test's own copy with its own DVC repository."""
    copy_build(gap_build, tmp_path, small_config.paths.graph)
    return dataclasses.replace(small_config, paths=dataclasses.replace(small_config.paths, dvc_root=str(tmp_path)))


def make_agent(resources, agent=None, evidence=None):
    """The loop as a unit over resources a test assembled (a scripted reader, a given extractor); the
    product builds its agents in one place, `EnrichRAG.agent`."""
    from enrich_rag.agent.loop import Agent

    return Agent(resources, agent or resources.config.agent, evidence or resources.config.evidence)
