"""Pick the LLM backend named in params.yaml (`llm.backend`)."""

from __future__ import annotations

from pathlib import Path

from enrich_rag.config import LLMConfig
from enrich_rag.errors import ConfigError
from enrich_rag.llm.base import LLM
from enrich_rag.llm.models import gguf_path, model_name, uses_chat


def make_llm(config: LLMConfig) -> LLM:
    if config.backend == "embedded":
        from enrich_rag.llm.embedded import load_embedded

        return load_embedded(Path(config.cache_dir).expanduser(), seed=config.seed, threads=config.threads)
    if config.backend == "hf":
        if not config.model:
            raise ConfigError("llm.backend 'hf' needs llm.model (a hub name or a local folder)")
        from enrich_rag.llm.hf_backend import HFCausalLM, load_causal_lm

        tokenizer, model = load_causal_lm(config.model, gguf_file=config.gguf_file or None)
        return HFCausalLM(tokenizer, model, name=config.model, seed=config.seed, threads=config.threads, chat=uses_chat(config))
    if config.backend == "openai":
        if not config.model:
            raise ConfigError("llm.backend 'openai' needs llm.model (the server's model name)")
        from enrich_rag.llm.openai_backend import OpenAICompatibleLLM

        return OpenAICompatibleLLM(
            config.base_url,
            config.model,
            config.api_key,
            timeout_s=config.timeout_s,
            retries=config.retries,
            seed=config.seed,
            endpoint=config.endpoint,
            chat=uses_chat(config),
        )
    if config.backend == "llamacpp":
        from enrich_rag.llm.llamacpp_backend import LlamaCppLLM

        cache_dir = Path(config.cache_dir).expanduser()
        cache_dir.mkdir(parents=True, exist_ok=True)
        return LlamaCppLLM(
            gguf_path(config, cache_dir),
            name=f"{model_name(config)} (llama.cpp)",
            context_tokens=config.context_tokens,
            threads=config.threads,
            weights=config.weights,
            seed=config.seed,
            chat=uses_chat(config),
        )
    raise ConfigError(f"unknown llm.backend '{config.backend}'")
