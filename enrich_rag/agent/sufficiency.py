"""Tools 2 and 3: CheckSufficiency (perplexity of a hypothetical answer) and AnalyzeDecide.

A model that has the fact it needs answers with low perplexity (measured here: " London" after the
right context ~1.1, without it ~1,600), so perplexity of its own greedy answer is a training-free
confidence signal. More context is worth fetching only while it keeps lowering that perplexity.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from enrich_rag.evidence.lines import Evidence, reading_line
from enrich_rag.llm.base import LLM
from enrich_rag.llm.reader import always, copies_a_shot, read

COPY_WORDS = 5  # an answer this long that starts an evidence line word for word was copied

# AnalyzeDecide's decisions.
ANSWER = "answer"
ENRICH = "enrich"
ANSWER_UNSURE = "answer_unsure"

# Why a search round stopped early.
UNDER_THRESHOLD = "under_threshold"
CONVERGED = "converged"
GROUNDED = "grounded"  # a hop reading its passages alone: the first read that states its answer


def recorded(perplexity: float) -> float | None:
    """A perplexity as traces and API replies carry it: an unreadable answer's infinite one is null
    (JSON has no infinity; the web server would fail on it)."""
    return round(perplexity, 4) if math.isfinite(perplexity) else None


@dataclass(frozen=True)
class Sufficiency:
    answer: str
    perplexity: float
    evidence: tuple[Evidence, ...]

    def record(self) -> dict[str, Any]:
        return {"answer": self.answer, "perplexity": recorded(self.perplexity)}


def check_sufficiency(
    llm: LLM, question: str, evidence: list[Evidence], max_new_tokens: int, again_fits: Callable[[int], bool] = always
) -> Sufficiency:
    lines = [reading_line(e) for e in evidence]
    generation = read(llm, question, lines, max_new_tokens=max_new_tokens, again_fits=again_fits)
    # A copied line or worked example reads with low perplexity and answers nothing (a small model's failure): no confidence.
    copied = copies_a_line(generation.text, lines) or copies_a_shot(generation.text, lines)
    perplexity = math.inf if copied else generation.perplexity
    return Sufficiency(generation.text, perplexity, tuple(evidence))


def copies_a_line(answer: str, lines: list[str]) -> bool:
    """The answer is the start of an evidence line, sentence-long: copied, not an answer."""
    text = " ".join(answer.split()).casefold()
    return len(text.split()) >= COPY_WORDS and any(" ".join(line.split()).casefold().startswith(text) for line in lines)


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
