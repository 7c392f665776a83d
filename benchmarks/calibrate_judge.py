"""How far the LLM judge's "correct" agrees with exact match, on answers an evaluation already made.

Reads evaluation predictions (every method's answers to real benchmark questions), asks the judge's
correctness question of a seeded sample of them, and reports agreement, precision and recall of
"correct" against exact match (and against the lenient "gold answer contained"). Every report with
judge scores then prints this figure beside them.

    python -m benchmarks calibrate_judge --predictions results/hotpotqa/<run>/predictions.jsonl --answers 200
    # -> bench_results/judge_calibration_<llm.model>.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from enrich_rag.config import load_config
from enrich_rag.eval.judge import calibrate, calibration_path
from enrich_rag.eval.runner import read_predictions
from enrich_rag.llm.factory import make_llm
from enrich_rag.llm.models import model_name


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--predictions", nargs="+", required=True, help="predictions.jsonl of evaluation runs")
    parser.add_argument("--answers", type=int, default=200, help="answers sampled (seeded) across the files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="default: bench_results/judge_calibration_<llm.model>.json")
    args = parser.parse_args()
    config = load_config(args.params)
    rows = [r | {"source": p} for p in args.predictions for r in read_predictions(Path(p))]
    rows = [r for r in rows if r.get("prediction") is not None]
    rows = random.Random(args.seed).sample(rows, min(args.answers, len(rows)))
    model = model_name(config.llm)
    calibration = calibrate(make_llm(config.llm), rows, progress=lambda rs: tqdm(rs, desc="judging", unit="answer"))
    result: dict[str, Any] = {
        "judge": model,
        "backend": config.llm.backend,
        "sources": args.predictions,
        "seed": args.seed,
        "methods": sorted({r["method"] for r in rows}),
        "em_correct_share": round(sum(bool(r["em"]) for r in rows) / len(rows), 4),
        **calibration,
    }
    out = Path(args.out) if args.out else calibration_path(Path(args.params).resolve().parent, model)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    table = Table(title=f"judge {model}: its 'correct' against reference verdicts, {len(rows)} answers")
    for column in ("reference", "agreement", "precision", "recall", "tp", "fp", "fn", "tn"):
        table.add_column(column, justify="right")
    for name in ("vs_em", "vs_contains"):
        r = result[name]
        table.add_row(name, *(str(r[k]) for k in ("agreement", "precision", "recall", "tp", "fp", "fn", "tn")))
    Console().print(table)
    Console().print(f"mean P(correct): EM-correct {result['mean_score_em_correct']}, EM-wrong {result['mean_score_em_wrong']} -> {out}")


if __name__ == "__main__":
    main()
