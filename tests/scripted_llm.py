"""A scripted LLM for the fast test layer: fixed answers with fixed perplexities, in order.

A fake on purpose: these tests are about the agent loop's branches (stop, decide, enrich, keep the
best), which a real model cannot be made to hit on demand. The real-model paths are tested with the
embedded Gemma model in the tests marked `slow`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from enrich_rag.llm.base import Generation
from enrich_rag.llm.prompts import as_text


class ScriptedLLM:
    name = "scripted"

    def __init__(self, script: Sequence[tuple[str, float]]):
        self.script = list(script)  # (answer, perplexity) per answer call; the last one repeats
        self.prompts: list[str] = []

    def generate(self, prompt, max_new_tokens: int = 24, stop: Sequence[str] = ("\n",)) -> Generation:
        self.prompts.append(as_text(prompt))
        text, ppl = self.script[min(len(self.prompts) - 1, len(self.script) - 1)]
        return Generation(text, [-math.log(ppl)] if math.isfinite(ppl) else [])

    def score(self, prompt, continuation: str) -> list[float]:
        return [-1.0]
