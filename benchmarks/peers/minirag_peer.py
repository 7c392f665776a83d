"""MiniRAG (HKUDS/MiniRAG at 4fe2fba, version 0.0.2) as the peers runner builds and asks it. Its only PyPI
release (`minirag-hku` 0.0.2) fails at import (`NameError: name 'abstractmethod' is not defined`, minirag/base.py
line 106); the repository's head fixes it and is what `requirements.txt` pins. It keeps its documented
defaults but for what running offline on this reader needs (`CHANGES`, written into every output)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.peers.callables import EMBED_TOKENS, ReaderLog, ReaderTokenizer, embedding_function, reader_function
from benchmarks.peers.lightrag_peer import documents as documents  # the same corpus as LightRAG
from benchmarks.peers.lightrag_peer import extracted as extracted  # and the same stores
from benchmarks.peers.sets import CONTEXT_TOKENS, reader_config
from enrich_rag.llm.models import model_name

NAME, VERSION = "minirag", "0.0.2 (HKUDS/MiniRAG 4fe2fba)"
MODES = "mini,naive"  # mini: its default query mode
PART_TOKENS = 2000  # each of its three query context parts (default 4000 each: 12,000 would outgrow the window)
SHORT = "A short phrase only (a name, date, number or yes/no), no explanation"
CHANGES = [
    "tokenizer: the reader's own, Qwen2.5's from its GGUF, set as minirag.utils.ENCODER (its tiktoken downloads a vocabulary)",
    f"reader context {CONTEXT_TOKENS} tokens; query max_token_for_text_unit, _global_context and _local_context "
    f"{PART_TOKENS} each (default 4000)",
    "llm_model_max_async 1, embedding_func_max_async 1 (one llama.cpp slot, 2 cores)",
    f"embedding max_token_size {EMBED_TOKENS}: its chunks stay whole; MiniLM embeds their first 256 word pieces",
    f"query response_type: {SHORT!r} (default 'Multiple Paragraphs')",
]


async def make(folder: Path, reader: Any, embedder: Any, log: ReaderLog) -> Any:
    import minirag.utils
    from minirag import MiniRAG
    from minirag.utils import EmbeddingFunc

    minirag.utils.ENCODER = ReaderTokenizer(reader_config())
    folder.mkdir(parents=True, exist_ok=True)
    return MiniRAG(
        working_dir=str(folder),
        llm_model_func=reader_function(
            reader, log, lambda kwargs: kwargs.get("system_prompt") is not None
        ),  # its answer call alone has one
        llm_model_name=model_name(reader_config()),
        llm_model_max_token_size=CONTEXT_TOKENS,
        llm_model_max_async=1,
        embedding_func=EmbeddingFunc(embedding_dim=384, max_token_size=EMBED_TOKENS, func=embedding_function(embedder)),
        embedding_func_max_async=1,
    )


def param(mode: str) -> Any:
    from minirag import QueryParam

    return QueryParam(
        mode=mode,
        response_type=SHORT,
        max_token_for_text_unit=PART_TOKENS,
        max_token_for_global_context=PART_TOKENS,
        max_token_for_local_context=PART_TOKENS,
    )


async def close(rag: Any) -> None:
    return None  # MiniRAG writes its stores at the end of each insert
