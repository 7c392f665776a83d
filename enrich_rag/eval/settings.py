"""The `eval` section of a configs/<dataset>.yaml: which questions, how many, which methods."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enrich_rag.errors import ConfigError
from enrich_rag.eval.datasets import FORMATS

# eval.corpus for questions written over this config's own corpus (`enrich-rag testset generate`):
# the build is used as it is, nothing is pooled or copied.
BUILT_CORPUS = "built"
DEFAULT_METHODS = ("no_retrieval", "naive_rag", "hybrid_rag", "graph_only", "enrichrag_no_enrich", "enrichrag")


@dataclass(frozen=True)
class JudgeConfig:
    enabled: bool = False
    backend: str = "same"  # same: the answering LLM; else an llm section's backend (embedded | hf | openai)
    model: str = ""
    base_url: str = ""


@dataclass(frozen=True)
class EvalConfig:
    dataset: str = "hotpotqa"
    questions: str = ""  # question file (bundled normalised JSONL, or a benchmark's original file)
    format: str = "normalized"
    corpus: str = ""  # single-hop sets: the passage corpus ({id,title,text} JSONL); multi-hop: pooled from questions; "built": this config's own build
    sample: int = 100  # 0 = all
    seed: int = 0
    methods: tuple[str, ...] = DEFAULT_METHODS
    ks: tuple[int, ...] = (2, 5, 10)
    output: str = "results"
    run_id: str = ""  # default: <sample>q-seed<seed>-<reader>, so a rerun resumes the same run
    judge: JudgeConfig = field(default_factory=JudgeConfig)

    @property
    def over_built_corpus(self) -> bool:
        return self.corpus == BUILT_CORPUS

    @property
    def run_name(self) -> str:
        return self.run_id or f"{self.sample or 'all'}q-seed{self.seed}"

    def run_dir(self) -> Path:
        return Path(self.output) / self.dataset / self.run_name


def eval_config(raw: dict[str, Any], root: Path) -> EvalConfig:
    data = dict(raw.get("eval") or {})
    if not data:
        raise ConfigError("the config has no 'eval' section (use configs/<dataset>.yaml)")
    known = {f.name for f in dataclasses.fields(EvalConfig)}
    unknown = set(data) - known
    if unknown:
        raise ConfigError(f"unknown key(s) in 'eval': {', '.join(sorted(unknown))}")
    judge = JudgeConfig(**(data.pop("judge", None) or {}))
    for key in ("methods", "ks"):
        if key in data:
            data[key] = tuple(data[key])
    for key in ("questions", "corpus", "output"):
        if data.get(key) and data[key] != BUILT_CORPUS and not Path(data[key]).is_absolute():
            data[key] = str((root / data[key]).resolve())
    config = EvalConfig(judge=judge, **data)
    if config.format not in FORMATS:
        raise ConfigError(f"eval.format '{config.format}' unknown (expected one of: {', '.join(FORMATS)})")
    if not config.questions:
        raise ConfigError("eval.questions is not set")
    return config
