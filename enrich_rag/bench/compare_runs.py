"""Two evaluation runs of one method on the same questions (e.g. before and after a change of the
reader): EM and F1 of each with their intervals, the paired difference (b - a) with its interval and
McNemar's p, overall and per question type. Prints a table and writes JSON.

    python scripts/compare_runs.py results/2wiki/prompt-baseline-b1be39b results/2wiki/comparisons-7acf40a \
        --method enrichrag_no_enrich --out bench_results/comparisons_2wiki.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from enrich_rag.eval.stats import bootstrap, compare, paired_rows, with_ci

METRICS = ("em", "f1")


def _rows(run: Path, method: str) -> list[dict]:
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in rows if r["method"] == method]


def summary(a: list[dict], b: list[dict]) -> dict:
    a, b = paired_rows(a, b)
    out = compare(b, a, METRICS)  # b - a
    for name, rows in (("a", a), ("b", b)):
        for metric in METRICS:
            score = bootstrap([r[metric] for r in rows]) if rows else None
            out[f"{name}_{metric}"] = [round(score.value, 4), *score.to_list()] if score else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the run before (a results/<dataset>/<run> folder)")
    parser.add_argument("b", type=Path, help="the run after")
    parser.add_argument("--method", default="enrichrag_no_enrich")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    a, b = _rows(args.a, args.method), _rows(args.b, args.method)
    types = sorted({r.get("type") or "all" for r in a})
    result = {"a": str(args.a), "b": str(args.b), "method": args.method, "overall": summary(a, b)}
    if len(types) > 1:
        result["by_type"] = {t: summary([r for r in a if r.get("type") == t], [r for r in b if r.get("type") == t]) for t in types}
    table = Table(title=f"{args.method}: {args.b.name} - {args.a.name} (paired, same questions)")
    for column in ("questions", "n", "EM before", "EM after", "EM difference", "McNemar p", "F1 difference"):
        table.add_column(column)
    for name, s in [("all", result["overall"]), *result.get("by_type", {}).items()]:
        table.add_row(
            name,
            str(s["n"]),
            with_ci(s["a_em"][0], s["a_em"][1:]) if s.get("a_em") else "",
            with_ci(s["b_em"][0], s["b_em"][1:]) if s.get("b_em") else "",
            with_ci(s.get("em"), s.get("em_ci")),
            str(s.get("em_mcnemar_p", "")),
            with_ci(s.get("f1"), s.get("f1_ci")),
        )
    Console().print(table)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
