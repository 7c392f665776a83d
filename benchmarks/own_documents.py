"""Own documents, as a user meets them: a folder of markdown the tests never use, built and served warm,
and questions written down from its pages before any answer was seen, asked through the server: first
read-only (no token), then with the server's token (enrichment allowed, as the owner asks).

Per pass: exact match with its interval, the share flagged unsure, EM of sure and of unsure answers, how
many answers enriched, and the seconds of the right answers (p50, max, share within `--within` s).

    python -m benchmarks own_documents --folder data/own_documents/npm-docs --out bench_results/own_documents_npm.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.served_folder import PROJECT, served_folder
from benchmarks.what_to_expect import streamed
from enrich_rag.eval.metrics import exact_match
from enrich_rag.eval.stats import bootstrap


def _share(rows: list[dict[str, Any]], key: str) -> float | None:
    return round(float(np.mean([r[key] for r in rows])), 3) if rows else None


def summary(rows: list[dict[str, Any]], within: float) -> dict[str, Any]:
    """`rows`: each answer with its `right` (EM against the written answers)."""
    em = bootstrap([float(r["right"]) for r in rows])
    sure = [r for r in rows if r.get("sure")]
    unsure = [r for r in rows if not r.get("sure")]
    right_s = [r["total_s"] for r in rows if r["right"]]
    return {
        "questions": len(rows),
        "errors": sum("error" in r for r in rows),
        "em": [round(em.value, 3), *em.to_list()],
        "unsure_share": round(len(unsure) / len(rows), 3) if rows else None,
        "em_sure": _share(sure, "right"),
        "sure": len(sure),
        "em_unsure": _share(unsure, "right"),
        "unsure": len(unsure),
        "enriched": sum(bool(r.get("enriched")) for r in rows),
        "right_p50_s": round(float(np.median(right_s)), 1) if right_s else None,
        "right_max_s": round(max(right_s), 1) if right_s else None,
        "right_within_share": round(float(np.mean([s <= within for s in right_s])), 3) if right_s else None,
        "p50_s": round(float(np.median([r["total_s"] for r in rows])), 1) if rows else None,
    }


def ask(url: str, questions: list[dict[str, Any]], token: str | None, timeout: float, label: str) -> list[dict[str, Any]]:
    rows = []
    for q in tqdm(questions, desc=label, unit="q"):
        answer = streamed(url, q["question"], token is not None, token, timeout)
        rows.append(
            {
                "question": q["question"],
                "gold": q["answers"],
                **answer,
                "right": bool(exact_match(answer.get("answer") or "", q["answers"])),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, required=True, help="holds docs/ (the documents) and questions.jsonl")
    parser.add_argument("--within", type=float, default=15.0, help="seconds a right answer should take at most")
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    questions = [json.loads(line) for line in (args.folder / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp, served_folder(args.folder / "docs", Path(tmp) / "ws") as served:
        read_only = ask(served.url, questions, None, args.timeout, "read-only")
        owner = ask(served.url, questions, served.token, args.timeout, "with the token")
        peak = served.peak_rss_mb()
    passes = {"read_only": read_only, "with_token": owner}
    result: dict[str, Any] = {
        "commit": commit,
        "folder": str(args.folder),
        "documents": len(list((args.folder / "docs").glob("*.md"))),
        "cores": os.cpu_count(),
        "build_s": served.build["seconds"],
        "server_warm_s": served.warm_s,
        "server_peak_rss_mb": peak,
        "within_s": args.within,
        **{name: summary(rows, args.within) for name, rows in passes.items()},
        "answers": passes,
    }
    table = Table(title=f"own documents: {args.folder.name}, {len(questions)} questions, commit {commit}")
    for column in ("server", "EM", "unsure", "EM sure / unsure", "enriched", "right p50 / max s", f"right within {args.within:g} s"):
        table.add_column(column)
    for name, label in (("read_only", "read-only"), ("with_token", "with the token")):
        s = result[name]
        table.add_row(
            label,
            f"{s['em'][0]} [{s['em'][1]}, {s['em'][2]}]",
            str(s["unsure_share"]),
            f"{s['em_sure']} ({s['sure']}) / {s['em_unsure']} ({s['unsure']})",
            str(s["enriched"]),
            f"{s['right_p50_s']} / {s['right_max_s']}",
            str(s["right_within_share"]),
        )
    Console().print(table)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
