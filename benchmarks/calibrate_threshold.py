"""Calibrate agent.ppl_threshold on bundled dev questions (no enrichment, the graph is not written).

For each question the agent's final perplexity and answer correctness (token F1 >= 0.5 against the
gold answers) are recorded; for each candidate threshold the table shows how many answers would be
accepted and how many of those are correct. The chosen threshold is the largest one whose accepted
answers are at least as accurate as `--target` (default: twice the overall accuracy, capped at 0.8).

    python -m benchmarks calibrate_threshold --questions 60   # -> bench_results/ppl_calibration_<llm.model>.json

Copy the chosen value into `SHIPPED` (enrich_rag/llm/models.py) for a shipped model, or set
`agent.ppl_threshold` for your own.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from enrich_rag.api import EnrichRAG
from enrich_rag.config import load_config
from enrich_rag.eval.metrics import token_f1
from enrich_rag.llm.models import model_name

CANDIDATES = (1.02, 1.05, 1.1, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 8.0, 12.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--offset", type=int, default=100, help="skip the questions the latency benchmark uses")
    parser.add_argument("--target", type=float, default=None)
    parser.add_argument("--out", default=None, help="default: bench_results/ppl_calibration_<llm.model>.json")
    args = parser.parse_args()
    config = load_config(args.params)
    out = Path(args.out or f"bench_results/ppl_calibration_{model_name(config.llm)}.json")
    rows = [json.loads(line) for line in Path(config.corpus.source).read_text().splitlines() if line.strip()]
    rows = rows[args.offset : args.offset + args.questions]
    # Calibrate the model's own scale: an explicit agent.ppl_threshold plays no part here.
    rag = EnrichRAG(config, reconcile=False)
    records = []
    for row in tqdm(rows, desc="calibrating", unit="q"):
        answer = rag.ask(row["question"], enrich="never")
        records.append(
            {"id": row["id"], "perplexity": answer.perplexity, "answer": answer.answer, "f1": token_f1(answer.answer, row["answers"])}
        )
    correct = [r["f1"] >= 0.5 for r in records]
    overall = sum(correct) / len(records)
    target = args.target if args.target is not None else min(0.8, 2 * overall)
    table = Table(title=f"perplexity threshold on {len(records)} dev questions (overall accuracy {overall:.2f})")
    for column in ("threshold", "accepted", "accuracy of accepted", "accuracy of rejected"):
        table.add_column(column, justify="right")
    sweep, chosen = [], None
    for t in CANDIDATES:
        acc = [c for r, c in zip(records, correct) if r["perplexity"] < t]
        rej = [c for r, c in zip(records, correct) if r["perplexity"] >= t]
        a = sum(acc) / len(acc) if acc else 0.0
        b = sum(rej) / len(rej) if rej else 0.0
        sweep.append({"threshold": t, "accepted": len(acc), "accuracy_accepted": a, "accuracy_rejected": b})
        table.add_row(f"{t}", f"{len(acc)}", f"{a:.2f}", f"{b:.2f}")
        if acc and a >= target:
            chosen = t
    Console().print(table)
    Console().print(f"target accuracy {target:.2f} -> chosen threshold {chosen}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "model": model_name(config.llm),
                "overall_accuracy": overall,
                "target": target,
                "chosen": chosen,
                "sweep": sweep,
                "records": records,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
