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


# Until a backend has timed its own calls: Qwen2.5 1.5B Q4_K_M on 2 cores of this project's machines
# (bench_results/find_scoreboard_end.json: about 23 ms a computed prompt token, about 4 characters a
# token, 70 ms a generated token; a little slower here, so a forecast errs long).
PROMPT_CHAR_S = 0.007
GENERATED_TOKEN_S = 0.08
PACE_WEIGHT = 0.3  # of the newest call in the running pace


@dataclass
class Pace:
    """How long a reader call takes: seconds per prompt character computed (not served by the prompt
    cache) and per token generated, from the backend's own timings. What an answer's time bound
    forecasts a call by (agent/trace.py, `ReaderBudget`)."""

    prompt_char_s: float = PROMPT_CHAR_S
    generated_token_s: float = GENERATED_TOKEN_S

    def add_llamacpp(self, timings: dict, prompt_chars: int) -> None:
        """llama.cpp's `timings` of one request over a prompt of `prompt_chars` characters: the computed
        share of them took `prompt_ms`, and `predicted_n` tokens took `predicted_ms`. Short computes and
        replies say more of the call's overhead than of its pace, so they are not counted."""
        computed, cached = int(timings.get("prompt_n", 0)), int(timings.get("cache_n", 0))
        if computed >= 32 and prompt_chars > 0:
            chars = prompt_chars * computed / (computed + cached)
            self.prompt_char_s = _eased(self.prompt_char_s, float(timings.get("prompt_ms", 0.0)) / 1000 / chars)
        if (generated := int(timings.get("predicted_n", 0))) >= 4:
            self.generated_token_s = _eased(self.generated_token_s, float(timings.get("predicted_ms", 0.0)) / 1000 / generated)

    def call_s(self, prompt_chars: int, generated_tokens: int) -> float:
        """The forecast of one call that computes `prompt_chars` new prompt characters and generates
        up to `generated_tokens`."""
        return prompt_chars * self.prompt_char_s + generated_tokens * self.generated_token_s

    def prompt_chars(self, seconds: float, generated_tokens: int) -> int:
        """The most new prompt characters a call may compute to end within `seconds`."""
        return max(0, int((seconds - generated_tokens * self.generated_token_s) / self.prompt_char_s))


def _eased(pace: float, measured: float) -> float:
    return (1 - PACE_WEIGHT) * pace + PACE_WEIGHT * measured if measured > 0 else pace


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
