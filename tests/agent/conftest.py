"""Agent fixtures: the real embedded LLM, and a small built graph whose seed lacks one passage."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from enrich_rag.config import LLMConfig


@pytest.fixture(scope="session")
def embedded_llm():
    from enrich_rag.llm.factory import make_llm

    # First run dequantises the shipped GGUF (~60 s) and caches it; later runs load in seconds.
    return make_llm(LLMConfig())


def dvc_init(root: Path) -> None:
    subprocess.run([str(Path(sys.executable).with_name("dvc")), "init", "--no-scm", "-q"], cwd=root, check=True)


@pytest.fixture
def gap_config(small_config, spacy_extractor, tmp_path):
    """Corpus and indexes cover every passage; the seed graph leaves out the Christopher Nolan page."""
    from enrich_rag.build.corpus import prepare_corpus, read_chunks
    from enrich_rag.build.indexes import build_corpus_index, build_graph_index
    from enrich_rag.build.seed_graph import build_seed_graph, chunk_inputs

    config = dataclasses.replace(small_config, paths=dataclasses.replace(small_config.paths, dvc_root=str(tmp_path)))
    prepare_corpus(config)
    build_corpus_index(config)
    chunks = [c for c in chunk_inputs(read_chunks(config.paths.chunks)) if c.doc_id != "nolan"]
    build_seed_graph(config, extractor=spacy_extractor, chunks=chunks)
    build_graph_index(config)
    dvc_init(tmp_path)
    return config
