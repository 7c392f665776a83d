"""LLM-as-judge: the RAG triad (faithfulness, answer relevance, context relevance) plus correctness.

Each criterion is one yes/no question; the score is P(Yes) / (P(Yes) + P(No)) from the judge's
log-probs, so any backend that scores continuations can judge. The aggregate is their plain mean.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

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
    scores = {name: round(p_yes(llm, judge_prompt(CRITERIA[name], question, answer, context=context, gold=gold)), 4) for name in CRITERIA}
    scores["judge_aggregate"] = round(sum(scores.values()) / len(CRITERIA), 4)
    return scores


CORRECT_AT = 0.5  # a correctness score at or above this is the judge saying "correct"


def agreement(judged: list[bool], reference: list[bool]) -> dict[str, float | int]:
    """How far the judge's "correct" can be trusted against a reference verdict (exact match)."""
    tp = sum(j and r for j, r in zip(judged, reference))
    fp = sum(j and not r for j, r in zip(judged, reference))
    fn = sum(r and not j for j, r in zip(judged, reference))
    n = len(judged)
    return {
        "n": n,
        "agreement": round((n - fp - fn) / n, 4) if n else 0.0,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": n - tp - fp - fn,
    }


def calibrate(llm: LLM, rows: list[dict], progress=lambda rows: rows) -> dict[str, object]:
    """The correctness criterion on finished answers (evaluation rows: question, prediction, gold, em,
    acc), against exact match and against the lenient "gold contained in the answer"."""
    scores = [
        p_yes(llm, judge_prompt(CRITERIA["correctness"], r["question"], r["prediction"], context=[], gold=list(r["gold"])))
        for r in progress(rows)
    ]
    judged = [s >= CORRECT_AT for s in scores]
    return {
        "threshold": CORRECT_AT,
        "judged_correct_share": round(sum(judged) / len(judged), 4) if judged else 0.0,
        "vs_em": agreement(judged, [bool(r["em"]) for r in rows]),
        "vs_contains": agreement(judged, [bool(r["acc"]) for r in rows]),
        "mean_score_em_correct": _mean([s for s, r in zip(scores, rows) if r["em"]]),
        "mean_score_em_wrong": _mean([s for s, r in zip(scores, rows) if not r["em"]]),
    }


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def calibration_path(root: Path, model: str) -> Path:
    return root / "bench_results" / f"judge_calibration_{model}.json"


def trust_note(root: Path, model: str) -> str:
    """The line every judged report carries: how far this judge agrees with exact match, or that nobody measured it."""
    path = calibration_path(root, model)
    if not path.is_file():
        return (
            f"Judge {model}: not calibrated; read its scores with care (python -m benchmarks calibrate_judge measures "
            "its agreement with exact match)."
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    em = data["vs_em"]
    return (
        f"Judge {model}: agrees with exact match on {em['agreement']:.0%} of {em['n']} answers "
        f"(precision {em['precision']:.2f}, recall {em['recall']:.2f} of 'correct'; {path.name})."
    )
