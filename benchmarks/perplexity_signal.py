"""What the reader's perplexity says about whether an answer is right, read off evaluation runs.

The loop trusts perplexity twice: AnalyzeDecide enriches when it is over the threshold (the "unsure"
flag), and a retried round keeps its answer only when it reads with a lower perplexity. Per method:
the AUROC of low perplexity for a right answer (0.5 = no signal), with its bootstrap interval. For an
enriching method whose rows record every read (`trace.reads`), on the questions that enriched: the EM
of each keep rule (lowest perplexity, as the loop does; the first round's answer; the retried round's;
either right, the ceiling of any rule) and the paired difference of the retried round's against the
loop's. Within the first round, the same for which of its iterations' answers to give.

    python -m benchmarks perplexity_signal results/hotpotqa/dev300-0131a0b results/2wiki/shot-guard-c9968f2 \
        --out bench_results/perplexity_signal.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from enrich_rag.eval.metrics import exact_match
from enrich_rag.eval.stats import paired_difference, resample, with_ci


def auroc(scores: list[float], right: list[bool]) -> float | None:
    """P(a right answer scores higher than a wrong one), ties half: the Mann-Whitney statistic."""
    pos = np.array([s for s, r in zip(scores, right) if r], dtype=float)
    neg = np.array([s for s, r in zip(scores, right) if not r], dtype=float)
    if not len(pos) or not len(neg):
        return None
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def auroc_interval(scores: list[float], right: list[bool], resamples: int = 1000, seed: int = 0) -> list[float] | None:
    drawn = [auroc([scores[i] for i in idx], [right[i] for i in idx]) for idx in resample(len(scores), resamples, seed)]
    values = [v for v in drawn if v is not None]  # a draw with only right (or only wrong) answers has none
    return [round(float(np.percentile(values, 2.5)), 4), round(float(np.percentile(values, 97.5)), 4)] if values else None


def confidence(row: dict[str, Any]) -> float:
    """Minus the perplexity; an unreadable answer (null or infinite) is the least confident."""
    perplexity = (row.get("trace") or {}).get("perplexity")
    return -perplexity if perplexity is not None and math.isfinite(perplexity) else -math.inf


def _best(reads: list[dict[str, Any]]) -> dict[str, Any] | None:
    readable = [r for r in reads if r["perplexity"] is not None]
    return min(readable, key=lambda r: r["perplexity"]) if readable else (reads[0] if reads else None)


def keep_rules(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """EM of each keep rule on the questions that enriched (rows with reads from two rounds)."""
    enriched = [r for r in rows if len({x["round"] for x in (r.get("trace") or {}).get("reads", [])}) > 1]
    if not enriched:
        return None
    loop, first, retried = [], [], []
    repeated, repeated_seconds = 0, 0.0
    for row in enriched:
        reads = row["trace"]["reads"]
        # A retried read with round 0's answer and perplexity read round 0's context again: since the loop
        # reuses such a read, this is what a run before that change spent on them.
        seen = {(x["answer"], x["perplexity"]) for x in reads if x["round"] == 0}
        seconds = row["trace"].get("iteration_seconds") or [0.0] * len(reads)
        for x, took in zip(reads, seconds):
            if x["round"] > 0 and not x.get("reused") and (x["answer"], x["perplexity"]) in seen:
                repeated, repeated_seconds = repeated + 1, repeated_seconds + took
        last = max(x["round"] for x in reads)
        # from the reads, not the row's final answer: a comparison question's answer is reworded after the
        # loop (the Compare step), which would credit the loop's rule with what that step did
        loop.append(exact_match((_best(reads) or {}).get("answer", ""), row["gold"]))
        first.append(exact_match((_best([x for x in reads if x["round"] == 0]) or {}).get("answer", ""), row["gold"]))
        retried.append(exact_match((_best([x for x in reads if x["round"] == last]) or {}).get("answer", ""), row["gold"]))
    either = [max(a, b) for a, b in zip(first, retried)]
    diff = paired_difference(retried, loop)
    return {
        "questions": len(enriched),
        "em_lowest_perplexity": round(float(np.mean(loop)), 4),
        "em_first_round": round(float(np.mean(first)), 4),
        "em_retried_round": round(float(np.mean(retried)), 4),
        "em_either_right": round(float(np.mean(either)), 4),
        "retried_minus_loop": round(diff.value, 4),
        "retried_minus_loop_ci": diff.to_list(),
        "retried_right_first_wrong": int(sum(b and not a for a, b in zip(first, retried))),
        "first_right_retried_wrong": int(sum(a and not b for a, b in zip(first, retried))),
        "retried_reads": sum(x["round"] > 0 for r in enriched for x in r["trace"]["reads"]),
        "retried_reads_repeating_round_0": repeated,
        "seconds_a_question_repeating_round_0": round(repeated_seconds / len(enriched), 3),
    }


def _separation(rows: list[dict[str, Any]]) -> dict[str, Any]:
    scores, right = [confidence(r) for r in rows], [bool(r["em"]) for r in rows]
    value = auroc(scores, right)
    return {
        "questions": len(rows),
        "em": round(float(np.mean(right)), 4),
        "auroc": round(value, 4) if value is not None else None,
        "auroc_ci": auroc_interval(scores, right),
    }


def iteration_rules(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Within the first round, which of its reads to answer with, on the questions it read more than once:
    the lowest perplexity (the loop's rule), the first (narrowest context), the last (widest), or the
    answer most reads gave (ties to the lowest perplexity)."""
    rounds = [(r, [x for x in r["trace"]["reads"] if x["round"] == 0]) for r in rows if (r.get("trace") or {}).get("reads")]
    rounds = [(r, reads) for r, reads in rounds if len(reads) > 1]
    if not rounds:
        return None

    def voted(reads: list[dict[str, Any]]) -> str:
        counts = {a: sum(x["answer"] == a for x in reads) for a in {x["answer"] for x in reads}}
        top = [x for x in reads if counts[x["answer"]] == max(counts.values())]
        return (_best(top) or top[0])["answer"]

    rules = {
        "lowest_perplexity": lambda reads: (_best(reads) or reads[0])["answer"],
        "first": lambda reads: reads[0]["answer"],
        "last": lambda reads: reads[-1]["answer"],
        "most_given": voted,
    }
    scores = {name: [exact_match(rule(reads), r["gold"]) for r, reads in rounds] for name, rule in rules.items()}
    out: dict[str, Any] = {"questions": len(rounds)} | {f"em_{name}": round(float(np.mean(v)), 4) for name, v in scores.items()}
    for name in ("first", "last", "most_given"):
        diff = paired_difference(scores[name], scores["lowest_perplexity"])
        out[f"{name}_minus_lowest"] = [round(diff.value, 4), *diff.to_list()]
    return out


def signal(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method and "perplexity" in (r.get("trace") or {})]
        if not mine:
            continue
        types = sorted({r.get("type") or "" for r in mine})
        out[method] = _separation(mine) | ({"keep_rules": rules} if (rules := keep_rules(mine)) else {})
        if within := iteration_rules(mine):
            out[method]["iteration_rules"] = within
        if len(types) > 1:  # question types differ in what the answer looks like (a name of the question's, a date)
            out[method]["by_type"] = {t: _separation([r for r in mine if (r.get("type") or "") == t]) for t in types}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="results/<dataset>/<run> folders")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    result = {}
    for run in args.runs:
        rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines() if line.strip()]
        result[str(run)] = signal(rows)
    table = Table(title="perplexity as a sign of a right answer (AUROC 0.5 = none)")
    for column in ("run", "method", "n", "EM", "AUROC", "enriched", "EM kept", "EM round 0", "EM retried", "either", "retried - kept"):
        table.add_column(column)
    for run, methods in result.items():
        for method, s in methods.items():
            k = s.get("keep_rules") or {}
            table.add_row(
                Path(run).name,
                method,
                str(s["questions"]),
                str(s["em"]),
                with_ci(s["auroc"], s["auroc_ci"]) if s["auroc"] is not None else "-",
                str(k.get("questions", "-")),
                str(k.get("em_lowest_perplexity", "-")),
                str(k.get("em_first_round", "-")),
                str(k.get("em_retried_round", "-")),
                str(k.get("em_either_right", "-")),
                with_ci(k["retried_minus_loop"], k["retried_minus_loop_ci"]) if k else "-",
            )
    Console().print(table)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
