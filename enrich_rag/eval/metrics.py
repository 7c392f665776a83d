"""Answer metrics with the SQuAD normalisation (lower case, no punctuation, no articles, single spaces)."""

from __future__ import annotations

from collections import Counter

from enrich_rag.text import normalize_answer


def exact_match(prediction: str, golds: list[str]) -> float:
    return float(any(normalize_answer(prediction) == normalize_answer(g) for g in golds))


def _f1(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, golds: list[str]) -> float:
    return max((_f1(prediction, g) for g in golds), default=0.0)


def contains_answer(prediction: str, golds: list[str]) -> float:
    pred = normalize_answer(prediction)
    return float(any(normalize_answer(g) and normalize_answer(g) in pred for g in golds))


def recall_at_k(retrieved: list[str], gold: set[str], k: int) -> float:
    """Share of the gold passages among the first k retrieved."""
    return len(gold & set(retrieved[:k])) / len(gold) if gold else 0.0


def precision_at_k(retrieved: list[str], gold: set[str], k: int) -> float:
    """Share of the passages handed over (the first k, or fewer when a method returns fewer) that are gold.

    A fixed-budget selector that returns 2 passages is judged on those 2, as SEAL-RAG reports it;
    a method that returns nothing scores 0.
    """
    top = retrieved[:k]
    return len(gold & set(top)) / len(top) if top else 0.0


def all_evidence_at_k(retrieved: list[str], gold: set[str], k: int) -> float:
    """1 when every gold passage is among the first k: what a multi-hop answer needs, not half of it."""
    return float(bool(gold) and gold <= set(retrieved[:k]))
