"""LLM-as-judge: the RAG triad (faithfulness, answer relevance, context relevance) plus correctness.

Each criterion is one yes/no question; the score is P(Yes) / (P(Yes) + P(No)) from the judge's
log-probs, so any backend that scores continuations can judge. The aggregate is their plain mean.
"""

from __future__ import annotations

import math

from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import fence

CONTEXT_CHARS = 1500
CRITERIA = {
    "faithfulness": "Is the answer supported by the context?",
    "answer_relevance": "Does the answer address the question?",
    "context_relevance": "Is the context relevant to the question?",
    "correctness": "Does the answer mean the same as the reference answer?",
}


def judge_prompt(criterion: str, question: str, answer: str, context: list[str], gold: list[str]) -> str:
    body = fence(" ".join(context))[:CONTEXT_CHARS] or "(none)"
    return (f"You grade a question-answering system. Reply Yes or No.\n"
            f"Question: {fence(question)}\nContext: <<<{body}>>>\nAnswer: {fence(answer) or '(empty)'}\n"
            f"Reference answer: {fence(' / '.join(gold))}\n{CRITERIA[criterion]}\nReply:")


def p_yes(llm: LLM, prompt: str) -> float:
    yes, no = sum(llm.score(prompt, " Yes")), sum(llm.score(prompt, " No"))
    top = max(yes, no)
    return math.exp(yes - top) / (math.exp(yes - top) + math.exp(no - top))


def judge(llm: LLM, question: str, answer: str, context: list[str], gold: list[str]) -> dict[str, float]:
    scores = {name: round(p_yes(llm, judge_prompt(name, question, answer, context, gold)), 4) for name in CRITERIA}
    scores["judge_aggregate"] = round(sum(scores.values()) / len(CRITERIA), 4)
    return scores
