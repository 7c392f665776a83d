"""Does a synthetic test set rank methods like the real one? Spearman's rho between two evaluation
runs' method rankings, per metric, with a bootstrap interval: 100 questions leave methods a few
points apart tied within noise, and rho over six methods moves a lot with one swap. Within each set,
each step of its ranking comes with the paired difference of the two methods (same questions) and its
95% interval, so a step inside its interval reads as a tie, not an order.

    python -m benchmarks compare_rankings --real results/hotpotqa_pool/<run> --synthetic results/hotpotqa_synthetic/<run>
    # -> table + bench_results/testset_ranking_<synthetic dataset>.json
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from scipy.stats import spearmanr

from enrich_rag.eval.stats import paired_difference

METRICS = ("em", "f1", "acc", "recall@5", "all@5")
RESAMPLES = 1000


def per_question(run: Path, metric: str, names: list[str]) -> np.ndarray:
    """questions x methods, the questions every method answered."""
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for line in (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["method"] in names and metric in row:
            scores[row["id"]][row["method"]] = float(row[metric])
    return np.array([[s[m] for m in names] for s in scores.values() if len(s) == len(names)])


def bootstrap_rho(real: np.ndarray, synthetic: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """95% interval of rho, each set's questions resampled with replacement."""
    rng = np.random.default_rng(seed)
    rhos = []
    for _ in range(RESAMPLES):
        a = real[rng.integers(0, len(real), len(real))].mean(axis=0)
        b = synthetic[rng.integers(0, len(synthetic), len(synthetic))].mean(axis=0)
        if np.ptp(a) > 0 and np.ptp(b) > 0:
            rhos.append(spearmanr(a, b).statistic)
    low, high = np.percentile(rhos, [2.5, 97.5]) if rhos else (float("nan"), float("nan"))
    return round(float(low), 3), round(float(high), 3)


def ranking(methods: dict[str, dict], metric: str, names: list[str]) -> list[str]:
    return sorted(names, key=lambda m: -methods[m][metric])


def ranking_steps(scores: np.ndarray, names: list[str], order: list[str]) -> list[dict]:
    """Each step of a ranking (better, worse): the paired difference on the set's questions and its interval."""
    steps = []
    for better, worse in zip(order, order[1:]):
        d = paired_difference(scores[:, names.index(better)], scores[:, names.index(worse)], RESAMPLES)
        steps.append({"better": better, "worse": worse, "diff": round(d.value, 4), "ci": d.to_list(), "tie": not d.excludes_zero()})
    return steps


def shown(steps: list[dict]) -> str:
    """best > next ... with '=' where a step is inside its paired interval (a tie within noise)."""
    return steps[0]["better"] + "".join(f" {'=' if s['tie'] else '>'} {s['worse']}" for s in steps) if steps else ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", required=True, help="run folder of the real questions")
    parser.add_argument("--synthetic", required=True, help="run folder of the synthetic questions")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    real, synthetic = (json.loads((Path(p) / "metrics.json").read_text()) for p in (args.real, args.synthetic))
    shared = [m for m in real["methods"] if m in synthetic["methods"]]
    result = {
        "real": args.real,
        "synthetic": args.synthetic,
        "reader": real.get("llm_model", real.get("llm")),
        "methods": shared,
        "metrics": {},
    }
    table = Table(title=f"method rankings, real vs synthetic ({len(shared)} methods, reader {result['reader']})")
    for column in (
        "metric",
        "real ranking (best first; = a tie within the paired interval)",
        "synthetic ranking",
        "Spearman rho",
        "95% bootstrap",
    ):
        table.add_column(column)
    for metric in METRICS:
        names = [m for m in shared if metric in real["methods"][m] and metric in synthetic["methods"][m]]
        if len(names) < 3:
            continue
        rho = spearmanr([real["methods"][m][metric] for m in names], [synthetic["methods"][m][metric] for m in names]).statistic
        real_scores, synthetic_scores = per_question(Path(args.real), metric, names), per_question(Path(args.synthetic), metric, names)
        interval = bootstrap_rho(real_scores, synthetic_scores)
        result["metrics"][metric] = {
            "rho": round(float(rho), 3),
            "rho_95": interval,
            "real": {m: real["methods"][m][metric] for m in names},
            "synthetic": {m: synthetic["methods"][m][metric] for m in names},
            "real_ranking": ranking(real["methods"], metric, names),
            "synthetic_ranking": ranking(synthetic["methods"], metric, names),
        }
        entry = result["metrics"][metric]
        entry["real_steps"] = ranking_steps(real_scores, names, entry["real_ranking"])
        entry["synthetic_steps"] = ranking_steps(synthetic_scores, names, entry["synthetic_ranking"])
        table.add_row(metric, shown(entry["real_steps"]), shown(entry["synthetic_steps"]), f"{rho:.3f}", f"{interval[0]} to {interval[1]}")
    out = Path(args.out or f"bench_results/testset_ranking_{synthetic['dataset']}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    Console().print(table)
    Console().print(f"-> {out}")


if __name__ == "__main__":
    main()
