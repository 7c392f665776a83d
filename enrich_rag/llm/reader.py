"""The reader's answer over evidence lines, guarded against repeating a worked example.

A 1.5B reader that cannot find the answer in its facts sometimes replies with the last worked example's
answer ("Tasmania", the invented Velmar Trophy's region; seen among the 2Wiki dev runs' answers and in
enrichment's retried rounds with the gold passage read). Such a reply is asked again without the
examples: a full prompt evaluation, but only for those replies, and only where it fits the answer's time
(a HotpotQA dev answer's read took 35 s with it, past the 25 s bound). Where it does not fit the reply is
nothing: a worked example's answer that the facts do not hold is never the answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from enrich_rag.llm.base import LLM, Generation
from enrich_rag.llm.prompts import ANSWER_SHOTS, answer_prompt


def _words(text: str) -> str:
    return " ".join(text.split()).casefold()


SHOT_ANSWERS = frozenset(_words(reply) for _, reply in ANSWER_SHOTS)


def copies_a_shot(answer: str, lines: list[str]) -> bool:
    """The reply is a worked example's answer that none of its own facts contains."""
    text = _words(answer)
    return text in SHOT_ANSWERS and not any(text in _words(line) for line in lines)


def always(prompt_chars: int) -> bool:
    return True


def read(llm: LLM, question: str, lines: list[str], max_new_tokens: int, again_fits: Callable[[int], bool] = always) -> Generation:
    """The answer prompt's generation. A copied worked example is asked again without the examples where
    `again_fits` the characters that call computes anew (its question and facts: the rules before them
    are the cached prefix); otherwise the reply is empty."""
    prompt = answer_prompt(question, lines)
    generation = llm.generate(prompt, max_new_tokens=max_new_tokens)
    if copies_a_shot(generation.text, lines):
        again = dataclasses.replace(prompt, shots=())
        generation = llm.generate(again, max_new_tokens=max_new_tokens) if again_fits(len(again.query)) else Generation("")
    return generation
