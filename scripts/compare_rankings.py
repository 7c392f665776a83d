"""Does a synthetic test set rank methods like the real one? Spearman's rho between two evaluation
runs' method rankings, per metric.

    python scripts/compare_rankings.py --real results/hotpotqa_pool/<run> --synthetic results/hotpotqa_synthetic/<run>
    # -> table + bench_results/testset_ranking_<synthetic dataset>.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table
from scipy.stats import spearmanr

METRICS = ("em", "f1", "acc", "recall@5", "all@5")


def ranking(methods: dict[str, dict], metric: str, names: list[str]) -> list[str]:
    return sorted(names, key=lambda m: -methods[m][metric])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", required=True, help="run folder of the real questions")
    parser.add_argument("--synthetic", required=True, help="run folder of the synthetic questions")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    real, synthetic = (json.loads((Path(p) / "metrics.json").read_text()) for p in (args.real, args.synthetic))
    shared = [m for m in real["methods"] if m in synthetic["methods"]]
    result = {"real": args.real, "synthetic": args.synthetic, "reader": real["llm_model"], "methods": shared, "metrics": {}}
    table = Table(title=f"method rankings, real vs synthetic ({len(shared)} methods, reader {real['llm_model']})")
    for column in ("metric", "real ranking (best first)", "synthetic ranking", "Spearman rho"):
        table.add_column(column)
    for metric in METRICS:
        names = [m for m in shared if metric in real["methods"][m] and metric in synthetic["methods"][m]]
        if len(names) < 3:
            continue
        rho = spearmanr([real["methods"][m][metric] for m in names], [synthetic["methods"][m][metric] for m in names]).statistic
        result["metrics"][metric] = {"rho": round(float(rho), 3), "real": {m: real["methods"][m][metric] for m in names},
                                     "synthetic": {m: synthetic["methods"][m][metric] for m in names},
                                     "real_ranking": ranking(real["methods"], metric, names),
                                     "synthetic_ranking": ranking(synthetic["methods"], metric, names)}
        table.add_row(metric, " > ".join(result["metrics"][metric]["real_ranking"]),
                      " > ".join(result["metrics"][metric]["synthetic_ranking"]), f"{rho:.3f}")
    out = Path(args.out or f"bench_results/testset_ranking_{synthetic['dataset']}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    Console().print(table)
    Console().print(f"-> {out}")


if __name__ == "__main__":
    main()
