"""The one interface every LLM backend implements: generate text, and score a continuation.

Perplexity, the agent's sufficiency signal, is computed from `score` (or from the log-probs that
greedy generation already produced), so every backend must give token log-probs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from enrich_rag.errors import EnrichRagError

TOP_LOGPROBS = 20  # alternatives per position a continuation is looked up in (servers cap this near 20)
FLOOR_LOGPROB = -30.0  # a continuation token outside the top alternatives


class LLMError(EnrichRagError):
    pass


@dataclass(frozen=True)
class Generation:
    text: str
    token_logprobs: list[float] = field(default_factory=list)

    @property
    def perplexity(self) -> float:
        return perplexity(self.token_logprobs)


@dataclass
class TokenCount:
    """What a backend's calls cost in tokens, summed: prompt tokens computed (prefill), prompt tokens the
    prompt cache served instead (cached), and tokens generated. A backend that reports them keeps one as
    `tokens`; the evaluation reads it around each question."""

    prefill: int = 0
    cached: int = 0
    generated: int = 0

    def add_llamacpp(self, timings: dict) -> None:
        """llama.cpp's per-request `timings`: `prompt_n` computed, `cache_n` reused, `predicted_n` generated."""
        self.prefill += int(timings.get("prompt_n", 0))
        self.cached += int(timings.get("cache_n", 0))
        self.generated += int(timings.get("predicted_n", 0))

    def since(self, before: TokenCount) -> dict[str, int]:
        return {
            "prefill_tokens": self.prefill - before.prefill,
            "cached_tokens": self.cached - before.cached,
            "generated_tokens": self.generated - before.generated,
        }

    def copy(self) -> TokenCount:
        return TokenCount(self.prefill, self.cached, self.generated)


class LLM(Protocol):
    name: str

    # `prompt` is a `prompts.Prompt` (rendered as chat turns or completion text, as the model needs)
    # or plain completion text.
    def generate(self, prompt, max_new_tokens: int = 24, stop: Sequence[str] = ("\n",)) -> Generation: ...

    def score(self, prompt, continuation: str) -> list[float]: ...


def perplexity(token_logprobs: Sequence[float]) -> float:
    """exp of the mean negative log-prob; infinite for an empty continuation (nothing to trust)."""
    if not token_logprobs:
        return math.inf
    return math.exp(-sum(token_logprobs) / len(token_logprobs))


def continuing_token(alternatives: Sequence[dict], rest: str) -> dict | None:
    """Among one position's top alternatives (OpenAI `top_logprobs` entries), the longest token that
    continues `rest`: how a continuation is scored where the server cannot echo prompt log-probs."""
    options = [a for a in alternatives if a.get("token") and rest.startswith(a["token"])]
    return max(options, key=lambda a: len(a["token"])) if options else None


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=len(text))
    return text[:cut]
