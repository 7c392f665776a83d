"""HippoRAG 2 (`hipporag` 2.0.0a4) as the peers runner builds and asks it.

Its published pins do not resolve here (torch 2.5.1, transformers 4.45.2, vllm 0.6.6.post1: a CUDA build),
so setup.sh installs it without them, beside the project's torch and transformers. Its import reaches
`vllm` (its offline OpenIE mode) and `gritlm` (one embedding model) at module level; neither path is run
here, so `vllm` is an empty module and `gritlm` is installed without its pins. The reader and MiniLM are
plugged in where its code builds them (`_get_llm_class`, `_get_embedding_model_class`, read by
HippoRAG.__init__): a BaseLLM whose `infer` is the project's reader with a reply cache in the working
folder (as its own OpenAI class caches replies), and a BaseEmbeddingModel over MiniLM. Its settings are its
defaults (`BaseConfig`), but for the changes listed in `CHANGES`. Its QA prompt stays its own (a reasoning line,
then "Answer:"): asked for the short phrase LightRAG is asked for, this reader dropped the "Answer:" line and
answered in a sentence, EM 0.100 and 0.033 in its two modes against 0.167 and 0.167 (HotpotQA 30, at 2b703cd).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import os
import sqlite3
import sys
import threading
import types
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.peers.callables import ReaderLog
from benchmarks.peers.sets import CONTEXT_TOKENS
from enrich_rag.llm.prompts import Prompt

NAME, VERSION = "hipporag", "2.0.0a4"
MODES = "hipporag,dense"  # rag_qa (its default: HippoRAG 2) and rag_qa_dpr (its dense retrieval baseline)
CHANGES = [
    "installed without its pins (torch 2.5.1, transformers 4.45.2, vllm): the project's torch 2.13 and transformers",
    "vllm an empty module (imported at module level for its offline OpenIE mode, not used)",
    "reader: the project's, through _get_llm_class (its OpenAI client otherwise); replies cached in the working folder",
    "embeddings: MiniLM through _get_embedding_model_class (NV-Embed-v2 by default)",
    f"reader context {CONTEXT_TOKENS} tokens",
    "corpus: each titled paragraph one passage ('title\\ntext', as its own HotpotQA runs index it)",
]


class Reader:
    """HippoRAG's LLM: `infer(messages)` -> (reply, metadata, cache hit), replies cached by their messages."""

    def __init__(self, reader: Any, log: ReaderLog, cache: Path, max_new_tokens: int):
        self.reader, self.log, self.max_new_tokens = reader, log, max_new_tokens
        self._db = sqlite3.connect(str(cache), check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT)")
        self._lock = threading.Lock()  # its OpenIE calls from a thread pool; the reader has one slot

    def infer(self, messages: list[dict[str, str]], **kwargs: Any) -> tuple[str, dict[str, Any], bool]:
        key = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        self.log.handed(*(m["content"] for m in messages))
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
            if row:
                return row[0], {"finish_reason": "stop", "prompt_tokens": 0, "completion_tokens": 0}, True
            system = "\n".join(m["content"] for m in messages if m["role"] == "system")
            turns = [m["content"] for m in messages if m["role"] != "system"]
            shots = tuple((turns[i], turns[i + 1]) for i in range(0, len(turns) - 1, 2))
            limit = int(kwargs.get("max_tokens") or self.max_new_tokens)
            self.log.calls += 1
            made = self.reader.generate(Prompt(system, shots, turns[-1], "", ""), limit, ())
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, made.text))
            self._db.commit()
        made_tokens = len(made.token_logprobs)
        finish = "length" if made_tokens >= limit else "stop"
        return made.text, {"finish_reason": finish, "prompt_tokens": 0, "completion_tokens": made_tokens}, False

    def batch_infer(self, batch: list[list[dict[str, str]]], **kwargs: Any) -> tuple[list[str], list[dict[str, Any]]]:
        replies = [self.infer(messages, **kwargs) for messages in batch]
        return [r[0] for r in replies], [r[1] for r in replies]


def minilm_class(embedder: Any) -> type:
    class MiniLM:
        embedding_dim = 384

        def __init__(self, global_config: Any = None, embedding_model_name: str = "") -> None:
            self.global_config, self.embedding_model_name = global_config, embedding_model_name

        def batch_encode(self, texts: list[str] | str, **kwargs: Any) -> np.ndarray:
            texts = [texts] if isinstance(texts, str) else list(texts)
            return np.asarray(embedder.encode(texts, normalize_embeddings=True), dtype=np.float32)

    return MiniLM


class Hippo:
    """HippoRAG behind the runner's async calls (`ainsert`, `aquery`)."""

    def __init__(self, rag: Any):
        self.rag = rag

    async def ainsert(self, texts: list[str], ids: list[str]) -> None:
        await asyncio.to_thread(self.rag.index, texts)

    async def aquery(self, question: str, param: str) -> str:
        qa = self.rag.rag_qa if param == "hipporag" else self.rag.rag_qa_dpr
        solutions, *_ = await asyncio.to_thread(qa, [question])
        return str(solutions[0].answer)


async def make(folder: Path, reader: Any, embedder: Any, log: ReaderLog) -> Hippo:
    sys.modules.setdefault("vllm", types.SimpleNamespace(SamplingParams=None, LLM=None))  # type: ignore[arg-type]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm (its Bedrock class) would fetch a price list
    from hipporag.utils.config_utils import BaseConfig

    module = importlib.import_module("hipporag.HippoRAG")  # the module: `hipporag.HippoRAG` the attribute is its class

    folder.mkdir(parents=True, exist_ok=True)
    config = BaseConfig(save_dir=str(folder), llm_name="qwen2.5-1.5b-instruct", embedding_model_name="minilm")
    vars(module).update(  # the factories HippoRAG.__init__ reads from its module
        _get_llm_class=lambda cfg: Reader(reader, log, folder / "reader_replies.sqlite", cfg.max_new_tokens or 2048),
        _get_embedding_model_class=lambda embedding_model_name="": minilm_class(embedder),
    )
    return Hippo(module.HippoRAG(global_config=config))


def param(mode: str) -> str:
    return mode


def documents(units: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    return [(title, f"{title}\n{text}") for _, title, text in units]


def extracted(index: Path) -> dict[str, int]:
    """What its OpenIE kept: passages, unique entities, triples, and passages it drew no triple from."""
    found = sorted(index.glob("openie_results_ner_*.json"))
    docs = json.loads(found[0].read_text(encoding="utf-8"))["docs"] if found else []
    entities = {e for d in docs for e in d.get("extracted_entities", [])}
    return {
        "chunks": len(docs),
        "entities": len(entities),
        "relations": sum(len(d.get("extracted_triples", [])) for d in docs),
        "chunks_without_entities": sum(1 for d in docs if not d.get("extracted_triples")),
    }


async def close(rag: Hippo) -> None:
    return None  # it writes its stores as it indexes
