"""IRCoT (Trivedi et al., ACL 2023), the baseline for multi-hop reading: interleave one sentence of
chain-of-thought with one retrieval, on the same reader and the same corpus index as the loop.

Retrieve `K` paragraphs for the question; then, until a sentence says "answer is" or `MAX_STEPS`
sentences are written: the reader writes the next sentence over every paragraph retrieved so far and the
reasoning before it, and that sentence is the next query (its new paragraphs join, up to
`MAX_PARAGRAPHS`). The answer is what follows "answer is"; without one, the reader's answer over the
paragraphs IRCoT retrieved (the paper's separate reader step). K, the step cap and the paragraph cap are
smaller than the paper's (K up to 8, 15 paragraphs): a 1.5B reader with a 4,096-token window on 2 cores.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import ircot_prompt

K = 2
MAX_STEPS = 4
MAX_PARAGRAPHS = 8
STEP_TOKENS = 48
_ANSWER_IS = re.compile(r"answer is:?\s*(?P<answer>.+?)\s*\.?\s*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")

Search = Callable[[str, int], list[tuple[str, str]]]  # query, k -> (doc id, paragraph text)


@dataclass
class Reasoning:
    answer: str | None  # what followed "answer is", or None
    paragraphs: list[tuple[str, str]] = field(default_factory=list)  # (doc id, text), in retrieval order
    thoughts: list[str] = field(default_factory=list)


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    return _SENTENCE_END.split(text, maxsplit=1)[0] if "answer is" not in text.lower() else text


def ircot(llm: LLM, search: Search, question: str) -> Reasoning:
    run = Reasoning(None)
    seen: set[str] = set()

    def retrieve(query: str) -> None:
        for doc, text in search(query, K):
            if text not in seen and len(run.paragraphs) < MAX_PARAGRAPHS:
                seen.add(text)
                run.paragraphs.append((doc, text))

    retrieve(question)
    for _ in range(MAX_STEPS):
        prompt = ircot_prompt(question, [text for _, text in run.paragraphs], run.thoughts)
        sentence = first_sentence(llm.generate(prompt, max_new_tokens=STEP_TOKENS).text)
        if not sentence:
            break
        run.thoughts.append(sentence)
        if found := _ANSWER_IS.search(sentence):
            run.answer = found["answer"].strip(" \"'")
            break
        retrieve(sentence)
    return run
