"""The planner's plans that the loop now refuses (two hops that ask the same thing, hops that leave out
much of the question, `agent/plan.py`), on committed hop-loop runs: how many, why, and what refusing
them would have done. A refused plan reads the question as one, so the replay takes the paired one-read
run's row for it and the hop loop's row for every other question (paired, 95% intervals). The
coverage cut-off (`MIN_COVERAGE`) was chosen on these runs: they are tuning data.

    python -m benchmarks plan_checks --runs musique=results/hops/musique/dev100-ec334a2 \\
        --runs hotpotqa=results/hops/hotpotqa/dev161-260-9444085 --out bench_results/plan_checks.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.route_questions import ROOT, _em, _mean, _rows
from enrich_rag.agent.plan import MIN_COVERAGE, ONE_HOP, parse_plan, plan_coverage
from enrich_rag.eval.stats import compare


def refused(row: dict[str, Any]) -> str:
    """Why the loop would now refuse the plan this row recorded ("" where it takes it, or none was made)."""
    plan = row["trace"].get("plan") or {}
    if (plan.get("kind") or ONE_HOP) == ONE_HOP:
        return ""
    again = parse_plan(row["question"], json.dumps({"hops": plan["hops"]}))
    return "coverage" if "of what the question says" in again.note else "repeated" if "same thing" in again.note else ""


def replay(hops: dict[str, dict], one_read: dict[str, dict]) -> dict[str, Any]:
    ids = [i for i in hops if i in one_read]
    why = {i: refused(hops[i]) for i in ids}
    chosen = [one_read[i] if why[i] else hops[i] for i in ids]
    planned = [i for i in ids if (hops[i]["trace"].get("plan") or {}).get("kind", ONE_HOP) != ONE_HOP]
    coverage = [plan_coverage(hops[i]["question"], hops[i]["trace"]["plan"]["hops"]) for i in planned]
    return {
        "n": len(ids),
        "planned": len(planned),
        "refused": dict(Counter(w for w in why.values() if w)),
        "planned_coverage_quartiles": [round(float(x), 3) for x in _quartiles(coverage)],
        "em": {"checked": _em(chosen), "hops": _em([hops[i] for i in ids]), "one_read": _em([one_read[i] for i in ids])},
        "checked_minus_hops": compare(chosen, [hops[i] for i in ids], ("em", "f1")),
        "refused_em": {
            "hops": _mean([hops[i]["em"] for i in ids if why[i]]),
            "one_read": _mean([one_read[i]["em"] for i in ids if why[i]]),
        },
    }


def _quartiles(values: list[float]) -> list[float]:
    import numpy as np

    return list(np.percentile(values, [25, 50, 75])) if values else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", action="append", required=True, help="set=run folder holding enrichrag_no_enrich and enrichrag_single")
    parser.add_argument("--out", default="bench_results/plan_checks.json")
    args = parser.parse_args()
    result: dict[str, Any] = {"min_coverage": MIN_COVERAGE, "tuned_on_these_runs": True, "sets": {}}
    table = Table(title=f"plans refused (coverage under {MIN_COVERAGE:.0%} or repeated hops), replayed on committed runs")
    for column in ("set", "questions", "planned", "refused", "EM checked", "EM hops", "checked - hops"):
        table.add_column(column)
    for spec in args.runs:
        name, folder = spec.split("=", 1)
        run = ROOT / folder
        entry = replay(_rows(run, "enrichrag_no_enrich"), _rows(run, "enrichrag_single")) | {"run": str(Path(folder))}
        result["sets"][name] = entry
        diff = entry["checked_minus_hops"]
        table.add_row(
            name,
            str(entry["n"]),
            str(entry["planned"]),
            ", ".join(f"{k} {v}" for k, v in entry["refused"].items()) or "0",
            f"{entry['em']['checked'][0]:.3f}",
            f"{entry['em']['hops'][0]:.3f}",
            f"{diff.get('em', 0):+.3f} [{diff.get('em_ci', [0, 0])[0]:+.3f}, {diff.get('em_ci', [0, 0])[1]:+.3f}]",
        )
    Console().print(table)
    (ROOT / args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
