"""Any OpenAI-compatible server (llama.cpp server, vLLM, Ollama's /v1, hosted APIs).

`endpoint: completions` scores a continuation from echoed prompt log-probs (`echo: true`).
`endpoint: chat` serves servers that only offer chat completions (instruct models get chat turns,
`llm.prompts`): the answer's perplexity comes from
the log-probs of the generated tokens (`logprobs: true`), and a continuation such as " Yes" is read
from the first position's `top_logprobs` (a chat reply cannot be prefilled portably, so only its
first token is scored). A server that returns no log-probs gets a clear error, not a silent 0.
Requests time out, and are retried with exponential backoff on connection errors and 5xx/429.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from enrich_rag.llm.base import FLOOR_LOGPROB, TOP_LOGPROBS, Generation, LLMError, continuing_token, cut_at_stop
from enrich_rag.llm.prompts import Prompt, as_messages, as_text

_RETRYABLE = {429, 500, 502, 503, 504}


class OpenAICompatibleLLM:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout_s: float = 60.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        seed: int = 0,
        endpoint: str = "completions",
        chat: bool = False,
    ):
        self.endpoint, self.chat = endpoint, chat
        self.base_url = base_url.rstrip("/")
        self.model, self.api_key, self.timeout_s = model, api_key, timeout_s
        self.retries, self.backoff_s, self.seed = retries, backoff_s, seed
        self.name = f"{model} @ {self.base_url}"

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode("utf-8")
        last: str = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                request = urllib.request.Request(url, data=data, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
                if exc.code not in _RETRYABLE:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = str(getattr(exc, "reason", exc))
            except json.JSONDecodeError:
                last = "response is not JSON"
                break
        raise LLMError(f"LLM server {url} failed after {attempt + 1} attempt(s): {last}")

    def _chat(self, prompt: Prompt | str, **options: Any) -> dict[str, Any]:
        messages = as_messages(prompt) if self.chat else [{"role": "user", "content": as_text(prompt)}]
        body = {"model": self.model, "messages": messages, "temperature": 0, "seed": self.seed, "logprobs": True} | options
        choice = self._post("/chat/completions", body)["choices"][0]
        content = (choice.get("logprobs") or {}).get("content")
        if not content:
            raise LLMError(
                f"LLM server {self.base_url} returned no log-probs on /chat/completions; perplexity needs "
                "`logprobs: true` support (llama.cpp server, vLLM, Ollama >= 0.12, OpenAI)"
            )
        return choice | {"tokens": content}

    def generate(self, prompt: Prompt | str, max_new_tokens: int = 24, stop: Sequence[str] = ("\n",)) -> Generation:
        if self.endpoint == "chat":
            choice = self._chat(prompt, max_tokens=max_new_tokens, stop=[s for s in stop if s])
            text = cut_at_stop((choice.get("message") or {}).get("content") or "", stop)
            return Generation(text.strip(), [float(t["logprob"]) for t in choice["tokens"]])
        body = {
            "model": self.model,
            "prompt": as_text(prompt),
            "max_tokens": max_new_tokens,
            "temperature": 0,
            "stop": list(stop),
            "logprobs": 1,
            "seed": self.seed,
        }
        choice = self._post("/completions", body)["choices"][0]
        text = cut_at_stop(choice.get("text", ""), stop)
        logprobs = (choice.get("logprobs") or {}).get("token_logprobs") or []
        return Generation(text.strip(), [float(x) for x in logprobs if x is not None])

    def score(self, prompt: Prompt | str, continuation: str) -> list[float]:
        if self.endpoint == "chat":
            choice = self._chat(prompt, max_tokens=1, top_logprobs=TOP_LOGPROBS)
            # A chat reply starts a new message: " Yes" after a prompt is "Yes" at its start.
            best = continuing_token(choice["tokens"][0].get("top_logprobs") or [], continuation.lstrip())
            return [float(best["logprob"]) if best else FLOOR_LOGPROB]
        prompt = as_text(prompt)
        body = {"model": self.model, "prompt": prompt + continuation, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}
        choice = self._post("/completions", body)["choices"][0]
        logprobs = choice.get("logprobs")
        if not logprobs or not logprobs.get("token_logprobs") or not logprobs.get("text_offset"):
            raise LLMError(
                f"LLM server {self.base_url} returned no echoed log-probs; perplexity needs a server that "
                "supports echo+logprobs on /completions (llama.cpp server with --logits_all, vLLM)"
            )
        start = len(prompt)
        # The echo covers prompt + continuation (+ the one generated token, past the end).
        end = len(prompt) + len(continuation)
        return [float(lp) for off, lp in zip(logprobs["text_offset"], logprobs["token_logprobs"]) if lp is not None and start <= off < end]
