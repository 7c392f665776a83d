"""Tools 2 and 3: CheckSufficiency (perplexity of a hypothetical answer) and AnalyzeDecide.

A model that has the fact it needs answers with low perplexity (measured here: " London" after the
right context ~1.1, without it ~1,600), so perplexity of its own greedy answer is a training-free
confidence signal. More context is worth fetching only while it keeps lowering that perplexity.
"""

from __future__ import annotations

from dataclasses import dataclass

from enrich_rag.agent.enrich_context import Fact
from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import answer_prompt

ANSWER = "answer"
ENRICH = "enrich"


@dataclass(frozen=True)
class Sufficiency:
    answer: str
    perplexity: float
    facts: tuple[Fact, ...]


def check_sufficiency(llm: LLM, question: str, facts: list[Fact], max_new_tokens: int) -> Sufficiency:
    generation = llm.generate(answer_prompt(question, [f.evidence for f in facts]), max_new_tokens=max_new_tokens)
    return Sufficiency(generation.text, generation.perplexity, tuple(facts))


def converged(history: list[Sufficiency], min_gain: float) -> bool:
    """More context stopped helping: the last round lowered perplexity by less than `min_gain` (relative)."""
    if len(history) < 2:
        return False
    previous, current = history[-2].perplexity, history[-1].perplexity
    if previous == float("inf"):
        return current == float("inf")
    return (previous - current) / previous < min_gain


def analyze_decide(perplexity: float, threshold: float) -> str:
    return ANSWER if perplexity < threshold else ENRICH
