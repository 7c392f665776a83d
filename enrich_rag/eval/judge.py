"""LLM-as-judge: the RAG triad (faithfulness, answer relevance, context relevance) plus correctness.

Each criterion is one yes/no question; the score is P(Yes) / (P(Yes) + P(No)) from the judge's
log-probs, so any backend that scores continuations can judge. The aggregate is their plain mean.
"""

from __future__ import annotations

import math

from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import Prompt, judge_prompt

CRITERIA = {
    "faithfulness": "Is the answer supported by the context?",
    "answer_relevance": "Does the answer address the question?",
    "context_relevance": "Is the context relevant to the question?",
    "correctness": "Does the answer mean the same as the reference answer?",
}


def p_yes(llm: LLM, prompt: Prompt) -> float:
    yes, no = sum(llm.score(prompt, " Yes")), sum(llm.score(prompt, " No"))
    top = max(yes, no)
    return math.exp(yes - top) / (math.exp(yes - top) + math.exp(no - top))


def judge(llm: LLM, question: str, answer: str, context: list[str], gold: list[str]) -> dict[str, float]:
    scores = {name: round(p_yes(llm, judge_prompt(CRITERIA[name], question, answer, context, gold)), 4) for name in CRITERIA}
    scores["judge_aggregate"] = round(sum(scores.values()) / len(CRITERIA), 4)
    return scores
