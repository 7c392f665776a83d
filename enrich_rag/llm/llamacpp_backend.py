"""GGUF models on llama.cpp in-process, through the prebuilt `xllamacpp` wheel (no compiler, no hub).

Why xllamacpp: llama-cpp-python has no wheel here and its native build dies with SIGILL on these
VMs; xllamacpp ships an AVX2 CPU build. Its in-process server answers OpenAI-shaped requests
(`handle_completions`) with token log-probs, and keeps the KV cache of a shared prompt head
(`cache_prompt`). It also opens a listener on a random 127.0.0.1 port; a random API key that only
this process knows guards it.

llama.cpp spin-waits its threads (OpenMP): never run it beside another CPU-heavy process.
"""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path
from typing import Any, Sequence

from enrich_rag.errors import ModelLoadError
from enrich_rag.llm.base import FLOOR_LOGPROB, TOP_LOGPROBS, Generation, LLMError, continuing_token, cut_at_stop


def _xllamacpp():
    try:
        import xllamacpp
    except ImportError as exc:
        raise ModelLoadError("llm.backend 'llamacpp' needs xllamacpp: pip install 'enrich-rag[llamacpp]'") from exc
    return xllamacpp


class LlamaCppLLM:
    def __init__(self, gguf: Path | str, name: str = "", context_tokens: int = 4096, threads: int = 0, seed: int = 0):
        xllamacpp = _xllamacpp()
        gguf = Path(gguf)
        if not gguf.is_file():
            raise ModelLoadError(f"no GGUF model at {gguf}")
        params = xllamacpp.CommonParams()
        params.model.path = str(gguf)
        params.n_ctx = context_tokens
        params.n_parallel = 1
        params.cpuparams.n_threads = threads or os.cpu_count() or 1
        params.cpuparams_batch.n_threads = threads or os.cpu_count() or 1
        params.api_keys = [secrets.token_hex(16)]
        try:
            self.server = xllamacpp.Server(params)
        except Exception as exc:  # xllamacpp raises plain RuntimeErrors for unreadable models
            raise ModelLoadError(f"llama.cpp cannot load {gguf}: {exc}".splitlines()[0]) from exc
        self.name, self.seed = name or gguf.stem, seed
        self._lock = threading.Lock()  # one slot: requests queue here

    @property
    def listening_address(self) -> str:
        return self.server.listening_address

    def _complete(self, body: dict[str, Any]) -> dict[str, Any]:
        request = {"temperature": 0, "cache_prompt": True, "seed": self.seed} | body
        with self._lock:
            response = self.server.handle_completions(request)
        if not isinstance(response, dict) or "choices" not in response:
            message = response.get("error", response) if isinstance(response, dict) else response
            raise LLMError(f"llama.cpp completion failed: {message}".splitlines()[0])
        return response["choices"][0]

    def generate(self, prompt: str, max_new_tokens: int = 24, stop: Sequence[str] = ("\n",)) -> Generation:
        choice = self._complete({"prompt": prompt, "max_tokens": max_new_tokens, "stop": [s for s in stop if s],
                                 "logprobs": 1})
        tokens = (choice.get("logprobs") or {}).get("content") or []
        # Keep exactly the tokens of the text up to the first stop string, and their log-probs.
        text, logprobs = "", []
        for token in tokens:
            if cut_at_stop(text + token["token"], stop) != text + token["token"]:
                break
            text += token["token"]
            logprobs.append(float(token["logprob"]))
        return Generation(cut_at_stop(choice.get("text", ""), stop).strip(), logprobs)

    def score(self, prompt: str, continuation: str) -> list[float]:
        """Log-probs of `continuation`'s tokens, read from each position's top alternatives.

        llama.cpp's server does not echo prompt log-probs, so the continuation is walked one greedy
        step at a time: at each step the longest alternative that continues it is taken. Short
        continuations (" Yes", " No") need one step; a token outside the top alternatives scores
        FLOOR_LOGPROB and ends the walk.
        """
        scores: list[float] = []
        done = ""
        while len(done) < len(continuation):
            choice = self._complete({"prompt": prompt + done, "max_tokens": 1, "logprobs": TOP_LOGPROBS})
            content = (choice.get("logprobs") or {}).get("content") or []
            best = continuing_token(content[0].get("top_logprobs") or [], continuation[len(done):]) if content else None
            if best is None:
                scores.append(FLOOR_LOGPROB)
                break
            scores.append(float(best["logprob"]))
            done += best["token"]
        return scores
