"""How likely an answer is wrong, from what the loop saw while answering it.

Perplexity alone barely tells a right answer from a wrong one (AUROC 0.52 on 2Wiki), so the unsure flag
fired on nearly every question. These features are ones any corpus has: how surely the reader wrote
the answer, whether its reads agreed, whether what it read states the answer (every hop's, for a
chain), how much of the question's entities the selection covered, and the answer's shape (one of the
question's own names, a yes or no: a choice between two is right more often). A logistic model over them
is fitted by `python -m benchmarks fit_confidence` on a run's predictions, and reported only on
questions it was not fitted on. A model fitted on other datasets does not carry over to a new corpus (the share of wrong
answers differs from corpus to corpus), so the loop reads the one fitted for its own corpus:
`<paths.root>/confidence.json`, fitted on synthetic questions over that corpus (`enrich-rag testset
generate`, an evaluation run on them, then `python -m benchmarks fit_confidence --fit-on ... --model-file ...`),
for the reader that answered them. Without one, the loop keeps the perplexity threshold.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from enrich_rag.text import YES_NO, normalize_answer, states

if TYPE_CHECKING:
    from enrich_rag.agent.trace import Trace

CONFIDENCE_FILE = "confidence.json"  # in a corpus's data folder (`paths.root`)
FEATURES = ("log_perplexity", "disagreement", "ungrounded", "uncovered", "answer_in_question", "yes_no", "chain")
MAX_LOG_PERPLEXITY = 5.0  # an unreadable answer (infinite perplexity) counts as this unsure


def confidence_summary(perplexity: float, trace: Trace, chain: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What of an answer's trace the features read; an evaluation's prediction row keeps the same keys."""
    return {"perplexity": perplexity, "reads": trace.reads(), "chain": list(chain), "selection": trace.selection()}


def features_of(
    question: str,
    answer: str,
    summary: Mapping[str, Any],
    chunk_ids: Sequence[str],
    chunk_texts: Callable[[Sequence[str]], Sequence[str]],
) -> dict[str, float]:
    """The one way features are computed, serving and fitting alike: what was read is the whole text of
    every chunk the answer cites (`chunk_texts` looks them up), never a fact citation's sentence alone."""
    return answer_features(question, answer, summary, read=list(chunk_texts(chunk_ids)) if chunk_ids else [])


def answer_features(question: str, answer: str, trace: Mapping[str, Any], read: Sequence[str]) -> dict[str, float]:
    """`trace`: the answer's trace as the API gives it (its reads, chain and selection); `read`: the text of
    every passage and fact line the answer was read from."""
    perplexity = trace.get("perplexity")
    log_ppl = math.log(perplexity) if isinstance(perplexity, int | float) and 0 < perplexity < math.inf else MAX_LOG_PERPLEXITY
    said = normalize_answer(answer)
    reads = [r for r in trace.get("reads") or [] if not r.get("reused")]
    agreeing = sum(normalize_answer(str(r.get("answer", ""))) == said for r in reads)
    chain = trace.get("chain") or []
    if chain:
        ungrounded = not all(hop.get("grounded") for hop in chain)
    else:
        ungrounded = not said or not any(states(text, answer) for text in read)
    coverage = (trace.get("selection") or {}).get("coverage")
    return {
        "log_perplexity": min(MAX_LOG_PERPLEXITY, max(0.0, log_ppl)),
        "disagreement": 1.0 - agreeing / len(reads) if reads else 1.0,
        "ungrounded": float(ungrounded),
        "uncovered": 1.0 - float(coverage) if isinstance(coverage, int | float) else 1.0,
        "answer_in_question": float(bool(said) and states(question, answer)),
        "yes_no": float(said in YES_NO),
        "chain": float(bool(chain)),
    }


def feature_matrix(rows: Sequence[Mapping[str, float]]) -> np.ndarray:
    return np.array([[float(r[f]) for f in FEATURES] for r in rows], dtype=float).reshape(len(rows), len(FEATURES))


@dataclass(frozen=True)
class WrongAnswerModel:
    """Logistic regression over standardised features: P(the answer is wrong)."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        z = (feature_matrix(rows) - np.array(self.mean)) / np.array(self.scale)
        return 1.0 / (1.0 + np.exp(-(z @ np.array(self.weights) + self.bias)))

    def probability(self, features: Mapping[str, float]) -> float:
        return float(self.probabilities([features])[0])

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "weights": list(self.weights),
            "bias": self.bias,
            "mean": list(self.mean),
            "scale": list(self.scale),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WrongAnswerModel:
        if list(data.get("features", [])) != list(FEATURES):
            raise ValueError(f"the confidence model was fitted on features {data.get('features')}, not {list(FEATURES)}: refit it")
        return cls(tuple(data["weights"]), float(data["bias"]), tuple(data["mean"]), tuple(data["scale"]))


def confidence_file(root: Path | str) -> Path:
    return Path(root) / CONFIDENCE_FILE


def load_wrong_answer_model(path: Path | str, reader: str | None = None) -> WrongAnswerModel | None:
    """The fitted model a file holds (`model` key), or None where nobody fitted one, or where it was fitted
    on another reader's answers (`reader`: the reader that will answer; None: any)."""
    path = Path(path)
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if reader is not None and data.get("reader") != reader:
        return None
    return WrongAnswerModel.from_dict(data["model"])
