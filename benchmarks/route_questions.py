"""The router as a classifier, and what it would have done to committed runs, with no reader call.

Every bundled dev question is routed (`route` below: the query analysis and the bridge check's parse). The
router ran in the loop as `agent.route` until it was retired: on HotpotQA dev 261-300 the routed loop lost
held-out chains, EM -0.075 [-0.175, 0.000] against the hop loop (bench_results/route_vs_hops_hotpotqa_261_300.json).
MuSiQue, HotpotQA and 2Wiki questions are all multi-hop and NQ's single-hop, so the share sent to the
planner is the router's recall on the first three and one minus its specificity on NQ. Where a committed
run of the hop loop (`--hops`) and one of the question read as one (`--one-read`) answered the same
questions, it also says, per set: among the questions routed to the planner, how often the planner wrote
the gold number of hops (MuSiQue); and the routed answer (`_routed_row`) against each run, paired, with
reader calls. The two runs may come from different commits:
this chooses a rule on dev data, and the routed loop is measured on its own afterwards.

    python -m benchmarks route_questions \\
        --hops musique=results/hops/musique/dev100-bridge-881e4d0 --one-read musique=results/hops/musique/dev100-ec334a2:enrichrag_single
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.plan_shapes import QUESTIONS
from enrich_rag.agent.plan import ONE_HOP, bridge_split
from enrich_rag.config import load_config
from enrich_rag.eval.stats import bootstrap, compare
from enrich_rag.evidence.query_analysis import COMPARISON, QueryAnalysis, analyze_query
from enrich_rag.extract.spacy_extractor import load_spacy

ROOT = Path(__file__).resolve().parents[1]
MULTI_HOP = {"musique", "hotpotqa", "2wiki"}
HOP_COUNT = re.compile(r"^(\d)hop")


def route(analysis: QueryAnalysis, nlp) -> tuple[bool, str]:
    """Whether the question would get a Plan call, and the cue: it compares two named things, or it names a
    thing by a description that can be asked on its own ("the director of Inception")."""
    if analysis.kind == COMPARISON:
        return True, "comparison"
    if bridge_split(analysis.question, nlp) is not None:
        return True, "description"
    return False, "no cue"


def routed(nlp, path: Path) -> list[dict[str, Any]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        plans, reason = route(analyze_query(item["question"], nlp), nlp)
        rows.append({"id": item["id"], "type": item.get("type", ""), "plans": plans, "reason": reason})
    return rows


def _run(spec: str, default_method: str) -> tuple[Path, str]:
    folder, _, method = spec.partition(":")
    return ROOT / folder, method or default_method


def _rows(folder: Path, method: str) -> dict[str, dict[str, Any]]:
    lines = (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines) if r["method"] == method}


def counterfactual(routes: list[dict[str, Any]], hops: dict[str, dict], one_read: dict[str, dict]) -> dict[str, Any]:
    """The router's answers against both runs; and the hop loop with only its comparisons read as one
    (`agent.compare_in_one_read`, the default since this replay) against the hop loop that planned them."""
    by_id = {r["id"]: r for r in routes}
    ids = [i for i in hops if i in one_read and i in by_id]
    chosen = [_routed_row(by_id[i]["plans"], hops[i], one_read[i]) for i in ids]
    compared = [_routed_row(by_id[i]["reason"] != "comparison", hops[i], one_read[i]) for i in ids]
    # Both: a comparison read as one, any other question planned only where the router sends it.
    both = [_routed_row(by_id[i]["plans"] and by_id[i]["reason"] != "comparison", hops[i], one_read[i]) for i in ids]
    planned = [i for i in ids if by_id[i]["plans"]]
    hop_rows = [hops[i] for i in ids]
    out: dict[str, Any] = {
        "n": len(ids),
        "routed_to_plan": len(planned),
        "comparisons": sum(by_id[i]["reason"] == "comparison" for i in ids),
        "em": {
            "routed": _em(chosen),
            "comparisons_in_one_read": _em(compared),
            "routed_and_comparisons_in_one_read": _em(both),
            "hops": _em(hop_rows),
            "one_read": _em([one_read[i] for i in ids]),
        },
        "routed_minus_hops": compare(chosen, hop_rows, ("em", "f1")),
        "routed_minus_one_read": compare(chosen, [one_read[i] for i in ids], ("em", "f1")),
        "comparisons_in_one_read_minus_hops": compare(compared, hop_rows, ("em", "f1")),
        "routed_and_comparisons_in_one_read_minus_comparisons_in_one_read": compare(both, compared, ("em", "f1")),
        "routed_and_comparisons_in_one_read_minus_one_read": compare(both, [one_read[i] for i in ids], ("em", "f1")),
        "reader_calls_mean": {
            "routed": _mean([r["llm_calls"] for r in chosen]),
            "comparisons_in_one_read": _mean([r["llm_calls"] for r in compared]),
            "routed_and_comparisons_in_one_read": _mean([r["llm_calls"] for r in both]),
            "hops": _mean([r["llm_calls"] for r in hop_rows]),
            "one_read": _mean([one_read[i]["llm_calls"] for i in ids]),
        },
    }
    gold = {i: int(m.group(1)) for i in planned if (m := HOP_COUNT.match(by_id[i]["type"]))}
    if gold:
        plans = {i: (hops[i]["trace"].get("plan") or {}).get("hops") or [] for i in gold}
        out["planned_gold_hop_count_share"] = round(sum(len(plans[i]) == gold[i] for i in gold) / len(gold), 3)
    return out


def _routed_row(plans: bool, hop_row: dict[str, Any], one_row: dict[str, Any]) -> dict[str, Any]:
    """What the routed loop would have answered: the hop loop's row where it plans; where it reads whole,
    the hop loop's own row less its Plan call when the planner had kept the question whole too (the same
    read follows), else the question read as one."""
    if plans:
        return hop_row
    if ((hop_row["trace"].get("plan") or {}).get("kind") or ONE_HOP) == ONE_HOP:
        return hop_row | {"llm_calls": hop_row["llm_calls"] - 1}
    return one_row


def _em(rows: list[dict[str, Any]]) -> list[float]:
    value = bootstrap([float(r["em"]) for r in rows])
    return [round(value.value, 3), *value.to_list()]


def _mean(values: list[float]) -> float:
    return round(float(np.mean(values)), 2) if values else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hops", action="append", default=[], help="set=run[:method] of the hop loop (default method enrichrag_no_enrich)")
    parser.add_argument(
        "--one-read", action="append", default=[], help="set=run[:method] of the question read as one (default enrichrag_single)"
    )
    parser.add_argument("--out", default="bench_results/route_questions.json")
    args = parser.parse_args()
    config = load_config(ROOT / "params.yaml")
    nlp = load_spacy(config.extraction.spacy_model)
    hops = dict(s.split("=", 1) for s in args.hops)
    one_read = dict(s.split("=", 1) for s in args.one_read)
    result: dict[str, Any] = {}
    table = Table(title="routing before planning (no reader call)")
    columns = ("set", "questions", "sent to the planner", "by reason", "routed EM", "compared whole EM", "hops EM", "one read EM")
    for column in (*columns, "calls routed/compared whole/hops/one"):
        table.add_column(column)
    for name, path in QUESTIONS.items():  # the bundled dev questions, as the plan-shape study reads them
        routes = routed(nlp, ROOT / path)
        by_type: dict[str, list[bool]] = defaultdict(list)
        for r in routes:
            by_type[r["type"]].append(r["plans"])
        share = sum(r["plans"] for r in routes) / len(routes)
        entry: dict[str, Any] = {
            "questions": len(routes),
            "multi_hop": name in MULTI_HOP,
            "sent_to_planner": round(share, 3),
            "kept_whole": round(1 - share, 3),
            "by_reason": dict(Counter(r["reason"] for r in routes)),
            "sent_to_planner_by_type": {t: round(sum(v) / len(v), 3) for t, v in sorted(by_type.items())},
        }
        cells = ["", "", "", "", ""]
        if name in hops and name in one_read:
            hop_run, hop_method = _run(hops[name], "enrichrag_no_enrich")
            one_run, one_method = _run(one_read[name], "enrichrag_single")
            entry["runs"] = {"hops": f"{hop_run.relative_to(ROOT)}:{hop_method}", "one_read": f"{one_run.relative_to(ROOT)}:{one_method}"}
            entry["counterfactual"] = cf = counterfactual(routes, _rows(hop_run, hop_method), _rows(one_run, one_method))
            calls = cf["reader_calls_mean"]
            cells = [
                *(f"{cf['em'][k][0]:.3f}" for k in ("routed", "comparisons_in_one_read", "hops", "one_read")),
                "/".join(str(calls[k]) for k in ("routed", "comparisons_in_one_read", "hops", "one_read")),
            ]
        result[name] = entry
        table.add_row(name, str(len(routes)), f"{share:.2f}", ", ".join(f"{k} {v}" for k, v in entry["by_reason"].items()), *cells)
    Console().print(table)
    (ROOT / args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
