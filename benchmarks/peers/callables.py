"""The reader and embeddings handed to the LightRAG family (LightRAG, MiniRAG) as the Python callables they
accept: the project's llama.cpp reader (greedy, its own tokenizer) and MiniLM, each call counted."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from enrich_rag.config import LLMConfig
from enrich_rag.llm.models import gguf_path
from enrich_rag.llm.prompts import Prompt

ANSWER_TOKENS = 64
EXTRACT_TOKENS = 1024
EMBED_TOKENS = 8192  # declared so a peer keeps its own 1,200-token chunks; MiniLM embeds their first 256 word pieces


@dataclass
class ReaderLog:
    """What a peer asked of the reader: the calls the reader answered (a peer's cached replies make none) and
    every prompt it was handed, cached or not, so a row can say what its context held."""

    calls: int = 0
    prompts: list[str] = field(default_factory=list)

    def handed(self, *parts: str | None) -> None:
        self.prompts.append("\n".join(part for part in parts if part))


class ReaderTokenizer:
    """The reader's own tokenizer (Qwen2.5's, read from its GGUF by transformers), offline and exact: a peer
    counts chunk and context tokens with it, and its chunks decode back to the text they were cut from (the
    peers' tiktoken downloads its vocabulary at first use)."""

    def __init__(self, config: LLMConfig):
        from transformers import AutoTokenizer

        gguf = gguf_path(config, Path(config.cache_dir).expanduser())
        self._inner = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)

    def encode(self, content: str) -> list[int]:
        return self._inner.encode(content, add_special_tokens=False)

    def decode(self, tokens: list[int]) -> str:
        return self._inner.decode(tokens)


def reader_function(reader: Any, log: ReaderLog, is_answer: Callable[[dict[str, Any]], bool]) -> Callable[..., Awaitable[str]]:
    """The peer's `llm_model_func`: its system prompt, history turns and prompt as the reader's chat turns.
    `is_answer(kwargs)` tells the query's answer call (capped at a short answer) from an extraction's; `log`
    counts each call and keeps what it was handed."""

    async def llm(prompt: str, system_prompt: str | None = None, history_messages: list | None = None, **kwargs: Any) -> str:
        history = history_messages or []
        shots = tuple((history[i]["content"], history[i + 1]["content"]) for i in range(0, len(history) - 1, 2))
        asked = Prompt(system_prompt or "", shots, prompt, "", "")
        limit = ANSWER_TOKENS if is_answer(kwargs | {"system_prompt": system_prompt}) else EXTRACT_TOKENS
        log.calls += 1
        log.handed(system_prompt, *(m["content"] for m in history), prompt)
        return (await asyncio.to_thread(reader.generate, asked, limit, ())).text

    return llm


def embedding_function(embedder: Any) -> Callable[..., Awaitable[np.ndarray]]:
    async def embed(texts: list[str], **kwargs: Any) -> np.ndarray:
        return await asyncio.to_thread(lambda: np.asarray(embedder.encode(list(texts), normalize_embeddings=True)))

    return embed
