"""The planner alone, on each bundled dev set: how often it plans a multi-hop question as more than one hop,
a single-hop question as one, and (MuSiQue) with the gold chain's number of hops. No retrieval, no reading:
one planner call per question, so a prompt can be compared across sets in minutes.

The shape each set's questions should get: NQ-Open one hop; HotpotQA bridge and 2Wiki compositional /
inference questions a chain; comparison questions one hop per compared entity (side by side); MuSiQue the
length of its gold decomposition.

    python -m benchmarks plan_shapes --range musique=51:100 --range 2wiki=41:100 --range nq=1:50 \
        --out bench_results/plan_shapes.json
    python -m benchmarks plan_shapes --compare bench_results/plan_shapes.json VARIANT.json --out PAIRED.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from enrich_rag.agent.plan import CHAIN, ONE_HOP, PARALLEL, PLAN_SCHEMA, make_plan
from enrich_rag.config import load_config
from enrich_rag.eval.datasets import QAItem, load_questions
from enrich_rag.eval.stats import bootstrap, paired_difference
from enrich_rag.llm.factory import make_llm
from enrich_rag.llm.prompts import PLAN_RULES, PLAN_SHOTS

PROJECT = Path(__file__).resolve().parents[1]
QUESTIONS = {
    "hotpotqa": "data/benchmarks/hotpotqa_distractor/dev.jsonl",
    "2wiki": "data/benchmarks/2wikimultihopqa/dev.jsonl",
    "musique": "data/benchmarks/musique/dev.jsonl",
    "nq": "data/benchmarks/nq_open/dev.jsonl",
}


def expected(dataset: str, item: QAItem) -> tuple[str, int]:
    """The plan kind and number of hops the question's shape calls for (0: any number above one)."""
    if dataset == "nq":
        return ONE_HOP, 1
    if dataset == "musique":
        return CHAIN, len(item.hops)
    if "comparison" in item.type:
        return PARALLEL, 0
    return CHAIN, 0


def _share(values: list[bool]) -> list[float] | None:
    if not values:
        return None
    score = bootstrap([float(v) for v in values])
    return [round(score.value, 3), *score.to_list()]


def study(dataset: str, items: list[QAItem], llm: Any) -> dict[str, Any]:
    rows = []
    for item in tqdm(items, desc=f"planning {dataset}", unit="q"):
        plan = make_plan(llm, item.question)
        kind, hops = expected(dataset, item)
        rows.append(
            {
                "id": item.id,
                "question": item.question,
                "type": item.type,
                "plan": list(plan.hops),
                "kind": plan.kind,
                "note": plan.note,
                "expected_kind": kind,
                "multi": plan.kind != ONE_HOP,
                "right_shape": (plan.kind == ONE_HOP) if kind == ONE_HOP else (plan.kind != ONE_HOP),
                "gold_hops": hops or None,
                "gold_count": len(plan.hops) == hops if hops > 1 else None,
            }
        )
    counted = [r["gold_count"] for r in rows if r["gold_count"] is not None]
    return {
        "questions": len(rows),
        "right_shape": _share([r["right_shape"] for r in rows]),
        "planned_multi": _share([r["multi"] for r in rows]),
        "gold_hop_count": _share(counted),
        "fallbacks": sum(1 for r in rows if r["note"]),
        "rows": rows,
    }


def compared(base: dict[str, Any], variant: dict[str, Any]) -> dict[str, Any]:
    """Per set, variant - base on the same questions: planned as more than one hop, and the gold hop count."""
    out = {}
    for name, b in base["sets"].items():
        v = variant["sets"].get(name)
        if v is None:
            continue
        pairs = {}
        for key in ("multi", "gold_count"):
            rows = [(x[key], y[key]) for x, y in zip(b["rows"], v["rows"]) if x["id"] == y["id"] and x[key] is not None]
            if rows:
                diff = paired_difference([float(y) for _, y in rows], [float(x) for x, _ in rows])
                pairs[key] = [round(diff.value, 3), *diff.to_list()]
        out[name] = pairs
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BASE", "VARIANT"), help="instead: pair two result files")
    parser.add_argument("--range", action="append", help="dataset=first:last (1-based, inclusive)")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.compare:
        base, variant = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        pairs = {"base": str(args.compare[0]), "variant": str(args.compare[1]), "variant_minus_base": compared(base, variant)}
        Console().print(pairs)
        Path(args.out).write_text(json.dumps(pairs, indent=2) + "\n", encoding="utf-8")
        return
    if not args.range:
        parser.error("--range (at least one) or --compare")
    config = load_config(PROJECT / args.params)
    llm = make_llm(config.llm)
    result: dict[str, Any] = {"reader": config.llm.model, "sets": {}}
    result["variant"] = {
        "what": "the planner as committed",
        "rules": PLAN_RULES,
        "shots": [list(s) for s in PLAN_SHOTS],
        "schema": PLAN_SCHEMA,
    }
    for spec in args.range:
        dataset, span = spec.split("=")
        first, last = (int(x) for x in span.split(":"))
        items = load_questions(PROJECT / QUESTIONS[dataset], "normalized")[first - 1 : last]
        result["sets"][f"{dataset} {first}-{last}"] = study(dataset, items, llm)
    table = Table(title=f"the planner alone, reader {config.llm.model}")
    for column in ("set", "n", "right shape", "planned >1 hop", "gold hop count", "fallbacks"):
        table.add_column(column, justify="left" if column == "set" else "right")
    fmt = lambda v: "" if v is None else f"{v[0]:.2f} [{v[1]:.2f}, {v[2]:.2f}]"  # noqa: E731
    for name, s in result["sets"].items():
        table.add_row(
            name, str(s["questions"]), fmt(s["right_shape"]), fmt(s["planned_multi"]), fmt(s["gold_hop_count"]), str(s["fallbacks"])
        )
    Console().print(table)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
