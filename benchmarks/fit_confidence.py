"""Fit the wrong-answer model (`enrich_rag/agent/confidence.py`) on committed dev predictions and say how
well it tells right from wrong on questions it was not fitted on.

Per dev set: the AUROC for "this answer is wrong" of perplexity alone, of the model fitted on the other
sets (leave one set out: the set it is reported on is never fitted on), and of 5-fold cross-validation
within the set; the expected calibration error and a reliability diagram of the leave-one-set-out
probabilities; how often the model's flag (P(wrong) > 0.5) fires and how often a flagged answer is
wrong. The model fitted on every set is written to the reader's file under bench_results/.

A corpus's own model (what the loop reads, `<paths.root>/confidence.json`) is fitted on synthetic
questions over that corpus (`--fit-on`), and each `--run` set of real questions is then scored by it too:

    python -m benchmarks fit_confidence --run hotpotqa=results/hotpotqa/dev300-0131a0b \
        --run 2wiki=results/2wiki/dev200-0131a0b --run musique=results/hops/musique/RUN \
        --run nq=results/hops/nq/dev100-ec334a2 --out bench_results/confidence_fit.json
    python -m benchmarks fit_confidence --fit-on hotpotqa=results/hops/hotpotqa_synthetic/RUN \
        --run hotpotqa=results/hops/hotpotqa/RUN --model-file data/datasets/hotpotqa/confidence.json \
        --out bench_results/confidence_own_corpus_hotpotqa.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from rich.console import Console
from rich.table import Table

from benchmarks.perplexity_signal import auroc, auroc_interval
from enrich_rag.agent.confidence import FEATURES, WrongAnswerModel, feature_matrix, features_of
from enrich_rag.config import load_config
from enrich_rag.eval.stats import with_ci
from enrich_rag.llm.models import model_name
from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.passages import read_passages

PROJECT = Path(__file__).resolve().parents[1]
METHOD = "enrichrag_no_enrich"
FOLDS = 5
BINS = 10
FLAG = 0.5


def examples(run: Path, params: str, method: str) -> list[dict[str, Any]]:
    """One row per answer: its features and whether it was wrong (EM 0). The passages come from the build
    of the dataset the run names (`configs/<eval.dataset>.yaml`)."""
    dataset = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))["eval"]["dataset"]
    config = load_config(PROJECT / params, PROJECT / f"configs/{dataset}.yaml")
    texts = {p.id: p.content for p in read_passages(PROJECT / config.paths.chunks)}
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for r in rows:
        if r["method"] != method:
            continue
        out.append({"id": r["id"], "features": row_features(r, texts), "wrong": not r["em"]})
    return out


def fit_wrong_answer_model(
    rows: Sequence[Mapping[str, float]], wrong: Sequence[bool], l2: float = 1.0, steps: int = 50
) -> WrongAnswerModel:
    """L2-regularised logistic regression by Newton's method: a few hundred dev answers, seven features."""
    x = feature_matrix(rows)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    y = np.asarray(wrong, dtype=float)
    w = np.zeros(z.shape[1])
    penalty = np.diag([l2] * len(FEATURES) + [0.0])  # the bias is not shrunk
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = z.T @ (z * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return WrongAnswerModel(tuple(float(v) for v in w[:-1]), float(w[-1]), tuple(float(v) for v in mean), tuple(float(v) for v in scale))


def row_features(row: dict[str, Any], texts: dict[str, str]) -> dict[str, float]:
    """An evaluation row's features, computed as the loop computes them serving (`features_of`)."""
    chunk_ids = row["trace"].get("chunk_ids", [])
    return features_of(row["question"], row["prediction"], row["trace"], chunk_ids, lambda ids: [texts.get(c, "") for c in ids])


def _auc(scores: np.ndarray, wrong: list[bool]) -> dict[str, Any]:
    value = auroc(scores.tolist(), wrong)
    return {"auroc": round(value, 4) if value is not None else None, "auroc_ci": auroc_interval(scores.tolist(), wrong)}


def calibration(probabilities: np.ndarray, wrong: list[bool]) -> dict[str, Any]:
    """Expected calibration error over equal-width bins, and the bins (mean predicted, observed, count)."""
    y = np.asarray(wrong, dtype=float)
    edges = np.linspace(0, 1, BINS + 1)
    bins, ece = [], 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (probabilities >= lo) & ((probabilities < hi) if hi < 1 else (probabilities <= hi))
        if inside.any():
            predicted, observed = float(probabilities[inside].mean()), float(y[inside].mean())
            ece += inside.mean() * abs(predicted - observed)
            bins.append([round(predicted, 4), round(observed, 4), int(inside.sum())])
    return {"ece": round(float(ece), 4), "bins": bins}


def cross_validated(rows: list[dict[str, Any]]) -> np.ndarray:
    """Each answer's probability from a model fitted on the other folds of its own set."""
    order = np.random.default_rng(0).permutation(len(rows))
    out = np.zeros(len(rows))
    for fold in range(FOLDS):
        held = order[fold::FOLDS]
        kept = np.setdiff1d(order, held)
        model = fit_wrong_answer_model([rows[i]["features"] for i in kept], [rows[i]["wrong"] for i in kept])
        out[held] = model.probabilities([rows[i]["features"] for i in held])
    return out


def study(sets: dict[str, list[dict[str, Any]]], fitted: WrongAnswerModel | None = None) -> dict[str, Any]:
    """Per set: perplexity alone, the model fitted on the other sets, 5-fold within the set, and (`fitted`)
    the model fitted on other runs altogether (a corpus's own synthetic questions); its flag counts, or
    else the leave-one-set-out model's."""
    result: dict[str, Any] = {}
    for name, rows in sets.items():
        wrong = [r["wrong"] for r in rows]
        others = [r for other, rs in sets.items() if other != name for r in rs]
        scored: dict[str, Any] = {}
        p = cv = cross_validated(rows)  # flags from the 5-fold model where nothing else held it out
        if others:
            held_out = fit_wrong_answer_model([r["features"] for r in others], [r["wrong"] for r in others])
            p = held_out.probabilities([r["features"] for r in rows])
            scored["leave_one_set_out"] = _auc(p, wrong) | calibration(p, wrong)
        if fitted is not None:
            p = fitted.probabilities([r["features"] for r in rows])
            scored["fitted_elsewhere"] = _auc(p, wrong) | calibration(p, wrong)
        flagged = p > FLAG
        result[name] = {
            "questions": len(rows),
            "wrong_share": round(float(np.mean(wrong)), 4),
            "perplexity_alone": _auc(np.array([r["features"]["log_perplexity"] for r in rows]), wrong),
            **scored,
            "within_set_5_fold": _auc(cv, wrong) | calibration(cv, wrong),
            "flag_share": round(float(flagged.mean()), 4),
            "wrong_when_flagged": round(float(np.mean([w for w, f in zip(wrong, flagged) if f])), 4) if flagged.any() else None,
            "wrong_when_not_flagged": round(float(np.mean([w for w, f in zip(wrong, flagged) if not f])), 4) if (~flagged).any() else None,
        }
    return result


def _reported(s: dict[str, Any]) -> dict[str, Any]:
    """The held-out probabilities a set is judged by: the model fitted elsewhere when there is one."""
    return s.get("fitted_elsewhere") or s.get("leave_one_set_out") or s["within_set_5_fold"]


def reliability_png(result: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        Console(stderr=True).print("matplotlib not installed (pip install 'enrich-rag[eval]'): reliability diagram skipped")
        return False
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
    for name, s in result.items():
        bins = _reported(s)["bins"]
        ax.plot([b[0] for b in bins], [b[1] for b in bins], marker="o", label=f"{name} (ECE {_reported(s)['ece']:.2f})")
    ax.set_xlabel("predicted P(wrong), fitted on other questions")
    ax.set_ylabel("observed share wrong")
    ax.set_title("wrong-answer model: reliability")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--run", action="append", required=True, help="dataset=results/<...>/<run>: a set to report on (dataset: a configs/ name)"
    )
    parser.add_argument(
        "--fit-on", action="append", default=[], help="name=RUN: fit the written model on these runs only (default: every --run)"
    )
    parser.add_argument("--model-file", type=Path, help="where the fitted model goes (default: bench_results/confidence_<reader>.json)")
    parser.add_argument("--method", default=METHOD)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    runs = dict(spec.split("=", 1) for spec in args.run)
    fit_on = dict(spec.split("=", 1) for spec in args.fit_on)
    sets = {name: examples(PROJECT / run, args.params, args.method) for name, run in runs.items()}
    fitting = [r for run in fit_on.values() for r in examples(PROJECT / run, args.params, args.method)]
    every = fitting or [r for rows in sets.values() for r in rows]
    model = fit_wrong_answer_model([r["features"] for r in every], [r["wrong"] for r in every])
    result = study(sets, model if fitting else None)
    reader = model_name(load_config(PROJECT / args.params).llm)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=PROJECT).stdout.strip()
    out = Path(args.out)
    png = out.with_suffix(".png")
    report = {
        "reader": reader,
        "commit": commit,
        "method": args.method,
        "runs": runs,
        "fitted_on": fit_on or runs,
        "features": list(FEATURES),
    }
    report |= {"fitted_questions": len(every), "sets": result, "reliability_png": str(png) if reliability_png(result, png) else None}
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    model_file = args.model_file or PROJECT / f"bench_results/confidence_{reader}.json"
    write_model(model_file, reader, fit_on or runs, args.method, model)
    table = Table(title=f"P(wrong answer), reader {reader}: AUROC on questions not fitted on")
    columns = ["set", "n", "wrong", "perplexity alone", "other sets' model", "5-fold", "ECE", "flagged", "wrong if flagged"]
    if fitting:
        columns[4] = f"fitted on {', '.join(fit_on)}"
    for column in columns:
        table.add_column(column, justify="left" if column == "set" else "right")
    for name, s in result.items():
        cell = lambda d: with_ci(d["auroc"], d["auroc_ci"]) if d and d["auroc"] is not None else "-"  # noqa: E731
        table.add_row(
            name,
            str(s["questions"]),
            f"{s['wrong_share']:.2f}",
            cell(s["perplexity_alone"]),
            cell(_reported(s)),
            cell(s["within_set_5_fold"]),
            f"{_reported(s)['ece']:.3f}",
            f"{s['flag_share']:.2f}",
            "-" if s["wrong_when_flagged"] is None else f"{s['wrong_when_flagged']:.2f}",
        )
    Console().print(table)
    Console().print(f"model fitted on {len(every)} answers: {model_file}")


def write_model(path: Path, reader: str, fitted_on: dict[str, str], method: str, model: WrongAnswerModel) -> None:
    """The file the loop reads (`<paths.root>/confidence.json`, or the reader's copy under bench_results/), atomically."""
    record = {"reader": reader, "fitted_on": fitted_on, "method": method, "model": model.to_dict()}
    with atomic_file(path) as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
