"""LightRAG (`lightrag-hku` 1.5.7) as the peers runner builds and asks it. It keeps its documented defaults
but for what running offline on this reader needs (`CHANGES`, written into every output)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.peers import sets
from benchmarks.peers.callables import EMBED_TOKENS, ReaderLog, ReaderTokenizer, embedding_function, reader_function
from benchmarks.peers.sets import CONTEXT_TOKENS, reader_config
from enrich_rag.llm.models import model_name

NAME, VERSION = "lightrag", "1.5.7"
MODES = "mix,naive"  # mix: its default query mode
QUERY_TOKENS = 6000  # its query context, under the reader's window with its answer
# One extraction call is minutes on 2 cores (default 240 s, then it gives up on the chunk); run at the lowest
# priority beside other work, an hour was outlasted too (its worker gives up at twice this).
LLM_TIMEOUT_S = 6 * 3600
SHORT = "Answer with a short phrase only (a name, date, number or yes/no), no explanation."
CHANGES = [
    "tokenizer: the reader's own, Qwen2.5's from its GGUF (LightRAG's tiktoken downloads its vocabulary at first use)",
    f"reader context {CONTEXT_TOKENS} tokens; query max_total_tokens {QUERY_TOKENS} (default 30000)",
    "llm_model_max_async 1, embedding_func_max_async 1 (one llama.cpp slot, 2 cores)",
    f"embedding max_token_size {EMBED_TOKENS}: LightRAG's chunks stay whole; MiniLM embeds their first 256 word pieces",
    f"default_llm_timeout {LLM_TIMEOUT_S} s (default 240: an extraction call on this reader and 2 cores outlasts it)",
    f"query user_prompt: {SHORT!r}",
]


async def make(folder: Path, reader: Any, embedder: Any, log: ReaderLog) -> Any:
    from lightrag import LightRAG
    from lightrag.utils import EmbeddingFunc, Tokenizer

    rag = LightRAG(
        working_dir=str(folder),
        llm_model_func=reader_function(reader, log, lambda kwargs: "stream" in kwargs),  # only its answer call passes `stream`
        llm_model_name=model_name(reader_config()),
        llm_model_max_async=1,
        default_llm_timeout=LLM_TIMEOUT_S,
        embedding_func=EmbeddingFunc(embedding_dim=384, max_token_size=EMBED_TOKENS, func=embedding_function(embedder)),
        embedding_func_max_async=1,
        tokenizer=Tokenizer(model_name(reader_config()), ReaderTokenizer(reader_config())),
    )
    await rag.initialize_storages()
    return rag


def extracted(index: Path) -> dict[str, int]:
    """What a LightRAG-family extraction kept: its graph's entities and relations, and the chunks it drew none
    from (a reply of the 1.5B reader the peer cannot parse leaves a chunk with nothing)."""
    import networkx as nx

    graph_file = index / "graph_chunk_entity_relation.graphml"
    graph = nx.read_graphml(graph_file) if graph_file.exists() else nx.Graph()
    chunks_file = index / "kv_store_text_chunks.json"
    chunks = json.loads(chunks_file.read_text(encoding="utf-8")) if chunks_file.exists() else {}
    sources = {c for _, data in graph.nodes(data=True) for c in str(data.get("source_id", "")).split("<SEP>") if c}
    return {
        "chunks": len(chunks),
        "entities": graph.number_of_nodes(),
        "relations": graph.number_of_edges(),
        "chunks_without_entities": sum(1 for chunk in chunks if chunk not in sources),
    }


def documents(units: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    return sets.documents(units)


def param(mode: str) -> Any:
    from lightrag import QueryParam

    return QueryParam(mode=mode, max_total_tokens=QUERY_TOKENS, user_prompt=SHORT)


async def close(rag: Any) -> None:
    await rag.finalize_storages()
