"""How far to trust a score and a difference: bootstrap intervals, paired differences, McNemar's test.

With 100 questions EM moves by 0.03-0.04 between runs of one setting, so a score is reported with its
95% interval and a difference between two methods (or two runs) on the same questions with the
interval of the *paired* difference: the questions are resampled together, which is what makes two
methods that fail on the same hard questions comparable. McNemar's exact test asks the same of EM from
the questions where the two disagree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def to_list(self) -> list[float]:
        return [round(self.low, 4), round(self.high, 4)]

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


def resample(n: int, resamples: int, seed: int) -> np.ndarray:
    """Bootstrap draws: row i holds the indices of resample i."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _interval(value: float, means: np.ndarray) -> Interval:
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Interval(float(value), float(low), float(high))


def bootstrap(values: Sequence[float], resamples: int = 2000, seed: int = 0) -> Interval:
    """The mean and its 95% percentile-bootstrap interval."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        raise ValueError("no values to bootstrap")
    return _interval(x.mean(), x[resample(len(x), resamples, seed)].mean(axis=1))


def paired_difference(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, resamples: int = 2000, seed: int = 0) -> Interval:
    """mean(a) - mean(b) over the same questions, resampled together (a[i] and b[i] are one question)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y) or len(x) == 0:
        raise ValueError(f"paired values need the same questions, got {len(x)} and {len(y)}")
    d = x - y
    return _interval(d.mean(), d[resample(len(d), resamples, seed)].mean(axis=1))


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Two-sided exact p that a and b are right equally often, from the questions only one got right."""
    only_a = sum(1 for x, y in zip(a, b) if x and not y)
    only_b = sum(1 for x, y in zip(a, b) if y and not x)
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired_rows(rows_a: list[dict], rows_b: list[dict]) -> tuple[list[dict], list[dict]]:
    """The rows of two methods (or runs) on the questions both answered, in one question order."""
    by_id = {r["id"]: r for r in rows_b}
    common = [r for r in rows_a if r["id"] in by_id]
    return common, [by_id[r["id"]] for r in common]


def compare(rows_a: list[dict], rows_b: list[dict], metrics: Sequence[str], resamples: int = 2000, seed: int = 0) -> dict:
    """a - b per metric with its paired interval, and McNemar's p on EM; on the questions both have."""
    a, b = paired_rows(rows_a, rows_b)
    out: dict = {"n": len(a)}
    if not a:
        return out
    for metric in metrics:
        if all(metric in r for r in a) and all(metric in r for r in b):
            diff = paired_difference([r[metric] for r in a], [r[metric] for r in b], resamples, seed=seed)
            out[metric] = round(diff.value, 4)
            out[f"{metric}_ci"] = diff.to_list()
    if "em" in metrics:
        out["em_mcnemar_p"] = round(mcnemar_exact([r["em"] for r in a], [r["em"] for r in b]), 4)
    return out


def with_ci(value: float | None, ci: list[float] | None) -> str:
    """How a table cell shows a score or a difference: 0.340 [0.250, 0.430]."""
    if value is None:
        return ""
    return f"{value:.3f}" if ci is None else f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
