"""Two readers side by side: EM and F1 per method from runs that differ only in `llm.model`, the
ratio of the first reader's score to the second's, and the paired difference on the same questions
with its 95% bootstrap interval and McNemar's exact p for EM. Runs must share their question sample and every
setting but the reader (checked from their config.yaml), or the ratio would measure something else.

    python -m benchmarks compare_readers --dataset hotpotqa 2wiki nq \
        --first qwen2.5-coder-1.5b-instruct --second gemma-270m
    # -> table + bench_results/reader_comparison.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from enrich_rag.eval.runner import RUNTIME_ONLY, RUNTIME_ONLY_LLM, read_predictions
from enrich_rag.eval.stats import compare as paired
from enrich_rag.eval.stats import with_ci

# What may differ between the two runs: the reader, and what no answer depends on (the run fingerprint's list).
READER = ("model", "backend", "gguf_file", "prompts")


def _relative(value, root: str):
    """Paths as the checkout that made the run wrote them, made relative to it."""
    if isinstance(value, dict):
        return {k: _relative(v, root) for k, v in value.items()}
    return value.removeprefix(root) if isinstance(value, str) else value


def settings(run: Path) -> dict:
    config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    root = str(Path(config["eval"]["output"]).parent) + "/"  # results/ sits in the checkout's root
    kept = {k: v for k, v in config.items() if k not in RUNTIME_ONLY} | {
        "llm": {k: v for k, v in config["llm"].items() if k not in (*RUNTIME_ONLY_LLM, *READER)},
        "eval": {k: v for k, v in config["eval"].items() if k not in ("output", "run_id", "methods")},
    }
    return _relative(kept, root)


def compare(first: Path, second: Path) -> dict:
    """Per method: each reader's EM and F1, first / second, and first - second on the questions both
    answered (`diff`: n, em, em_ci, f1, f1_ci, em_mcnemar_p), read from the runs' predictions."""
    a, b = (json.loads((run / "metrics.json").read_text(encoding="utf-8"))["methods"] for run in (first, second))
    answers = [read_predictions(run / "predictions.jsonl") for run in (first, second)]
    rows = {}
    for method in a:
        if method not in b:
            continue
        row: dict[str, Any] = {}
        for metric in ("em", "f1"):
            x, y = a[method].get(metric), b[method].get(metric)
            row |= {f"{metric}_first": x, f"{metric}_second": y, f"{metric}_ratio": round(x / y, 2) if x is not None and y else None}
        mine, theirs = ([r for r in run if r["method"] == method] for run in answers)
        row["diff"] = paired(mine, theirs, ("em", "f1"))
        rows[method] = row
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", nargs="+", required=True)
    parser.add_argument("--first", required=True, help="reader name as in the run folder (<n>q-seed<s>-<reader>)")
    parser.add_argument("--second", required=True)
    parser.add_argument("--run-prefix", default="100q-seed0", help="the run folder before the reader's name")
    parser.add_argument("--results", default="results")
    parser.add_argument("--out", default="bench_results/reader_comparison.json")
    args = parser.parse_args()
    out: dict = {"first": args.first, "second": args.second, "datasets": {}}
    table = Table(title=f"{args.first} vs {args.second}: EM / F1 per method (ratio first / second)")
    for col in (
        "dataset",
        "method",
        f"EM {args.first}",
        f"EM {args.second}",
        "EM ratio",
        f"F1 {args.first}",
        f"F1 {args.second}",
        "F1 ratio",
        "EM diff [95%]",
        "McNemar p",
        "same settings",
    ):
        table.add_column(col, justify="left" if col in ("dataset", "method") else "right")
    for dataset in args.dataset:
        first, second = (Path(args.results) / dataset / f"{args.run_prefix}-{name}" for name in (args.first, args.second))
        same = settings(first) == settings(second)
        rows = compare(first, second)
        out["datasets"][dataset] = {"first_run": str(first), "second_run": str(second), "same_settings": same, "methods": rows}
        for method, r in rows.items():
            table.add_row(
                dataset,
                method,
                *[str(r[f"{m}_{w}"]) for m in ("em", "f1") for w in ("first", "second", "ratio")],
                with_ci(r["diff"].get("em"), r["diff"].get("em_ci")),
                str(r["diff"].get("em_mcnemar_p", "")),
                "yes" if same else "[red]no[/red]",
            )
    Console().print(table)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
