"""The readers that ship on PyPI, by the name `llm.model` takes, with what each needs to know.

A model's perplexity scale is its own, so the AnalyzeDecide threshold is calibrated per model
(`python -m benchmarks calibrate_threshold`) and kept here beside the name; `agent.ppl_threshold` overrides
it (0 = use the model's). Instruct models read chat prompts through their own chat template; base
models read few-shot completions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from enrich_rag.config import AgentConfig, LLMConfig
from enrich_rag.errors import ConfigError


def _gemma_gguf(cache_dir: Path) -> Path:
    from enrich_rag.llm.embedded import embedded_gguf_path

    return embedded_gguf_path(cache_dir)


def _qwen_gguf(cache_dir: Path) -> Path:
    from enrich_rag.llm.model_files import QWEN25_CODER_15B, assemble

    return assemble(QWEN25_CODER_15B, cache_dir)


@dataclass(frozen=True)
class ShippedModel:
    name: str
    chat: bool
    ppl_threshold: float  # calibrated on 60 HotpotQA dev questions: bench_results/ppl_calibration_<name>.json
    gguf: Callable[[Path], Path]


SHIPPED = {
    m.name: m
    for m in (
        ShippedModel("qwen2.5-coder-1.5b-instruct", chat=True, ppl_threshold=1.05, gguf=_qwen_gguf),
        ShippedModel("gemma-270m", chat=False, ppl_threshold=1.5, gguf=_gemma_gguf),
    )
}
DEFAULT_READER = "qwen2.5-coder-1.5b-instruct"  # llamacpp with no llm.model
UNCALIBRATED_PPL_THRESHOLD = 1.5  # for a model nobody calibrated: run python -m benchmarks calibrate_threshold


def model_name(config: LLMConfig) -> str:
    """The reader's name as runs report it: the shipped name, or what the user configured."""
    if config.backend == "embedded":
        return "gemma-270m"
    return config.model or (DEFAULT_READER if config.backend == "llamacpp" else "")


def shipped(config: LLMConfig) -> ShippedModel | None:
    return SHIPPED.get(model_name(config)) if config.backend in ("embedded", "llamacpp") else None


def uses_chat(config: LLMConfig) -> bool:
    if config.prompts != "auto":
        return config.prompts == "chat"
    if (model := shipped(config)) is not None:
        return model.chat
    if config.backend == "openai":
        return config.endpoint == "chat"
    # A user's GGUF: instruct and chat models say so in their file names.
    return config.backend == "llamacpp" and any(word in Path(config.model).name.lower() for word in ("instruct", "chat"))


def ppl_threshold(agent: AgentConfig, llm: LLMConfig) -> float:
    if agent.ppl_threshold:
        return agent.ppl_threshold
    model = shipped(llm)
    return model.ppl_threshold if model else UNCALIBRATED_PPL_THRESHOLD


def gguf_path(config: LLMConfig, cache_dir: Path) -> Path:
    if (model := shipped(config)) is not None:
        return model.gguf(cache_dir)
    path = Path(config.model).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise ConfigError(f"llm.model '{config.model}' is neither a GGUF file nor one of: {', '.join(SHIPPED)}")
    return path
