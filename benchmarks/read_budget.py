"""What each reader call of the hop loop buys, replayed on committed runs with no reader call.

Per set: the hop loop's reader calls by step (Plan, whole reads and hop reads, date comparisons); on the
questions it read whole, the EM of the first read against the read it kept (growth by perplexity), paired;
and the read-first run (`agent.plan_when: unsure`, `grow: unstated`) replayed as a stop rule: stop at a
first read that states its answer under perplexity `t`, else the hop loop's answer (its first read is the
read-first run's, so the replay's calls undercount a planned question by that read). This says how many
reader calls an answer can shed before it loses EM to the reader's first read.

    python -m benchmarks read_budget --set nq=results/hops/nq/dev100-bridge-881e4d0,results/fast/nq/nq-dev100-readfirst
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.eval.metrics import exact_match
from enrich_rag.eval.stats import compare

ROOT = Path(__file__).resolve().parents[1]
READER_STEPS = ("Plan", "CheckSufficiency", "Compare")
STOP_AT = (1.05, 1.1, 1.2, 1.3, 1.5, 2.0, float("inf"))


def _rows(folder: str, methods: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (ROOT / folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    for method in methods:
        if found := {r["id"]: r for r in rows if r["method"] == method}:
            return found
    raise ValueError(f"{folder} holds none of {', '.join(methods)}")


def _whole(row: dict[str, Any]) -> bool:
    trace = row["trace"]
    return not trace.get("chain") and (trace.get("plan") or {}).get("kind", "single") == "single" and bool(trace.get("reads"))


def _stops(row: dict[str, Any], at: float) -> bool:
    """The read-first run answered with its first read: one read that stated its answer, under `at`."""
    trace = row["trace"]
    reads = trace.get("reads") or []
    one_read = trace.get("plan") is None and not trace.get("chain") and len(reads) == 1
    return one_read and reads[0]["perplexity"] is not None and reads[0]["perplexity"] < at


def budget(hops: dict[str, dict[str, Any]], read_first: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ids = [i for i in hops if i in read_first]
    steps = Counter(t for i in ids for t in hops[i]["trace"]["tools"] if t in READER_STEPS)
    whole = [hops[i] for i in ids if _whole(hops[i])]
    first = [r | {"em": exact_match(r["trace"]["reads"][0]["answer"], r["gold"])} for r in whole]
    sweep = []
    for at in STOP_AT:
        chosen = [read_first[i] if _stops(read_first[i], at) else hops[i] for i in ids]
        difference = compare(chosen, [hops[i] for i in ids], ("em",))
        sweep.append(
            {
                "stop_under": at if at != float("inf") else "any",
                "stopped": sum(_stops(read_first[i], at) for i in ids),
                "em": round(statistics.mean(r["em"] for r in chosen), 3),
                "minus_hops": difference["em"],
                "minus_hops_ci": difference["em_ci"],
                "llm_calls_mean": round(statistics.mean(r["llm_calls"] for r in chosen), 2),
            }
        )
    kept_minus_first = compare(whole, first, ("em",)) if whole else {}
    return {
        "n": len(ids),
        "hops_em": round(statistics.mean(hops[i]["em"] for i in ids), 3),
        "hops_llm_calls_mean": round(statistics.mean(hops[i]["llm_calls"] for i in ids), 2),
        "reader_steps_per_question": {t: round(steps[t] / len(ids), 2) for t in READER_STEPS},
        "read_whole": {
            "n": len(whole),
            "reads_mean": round(statistics.mean(len(r["trace"]["reads"]) for r in whole), 2) if whole else 0.0,
            "em_first_read": round(statistics.mean(r["em"] for r in first), 3) if whole else 0.0,
            "em_kept_read": round(statistics.mean(r["em"] for r in whole), 3) if whole else 0.0,
            "kept_minus_first": kept_minus_first,
        },
        "stop_at_a_stated_first_read": sweep,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, help="name=<hop loop run>,<read-first run>")
    parser.add_argument("--out", default="bench_results/read_budget.json")
    args = parser.parse_args()
    result: dict[str, Any] = {"tuned": True, "sets": {}}  # every run named here is a dev run rules were chosen on
    table = Table(title="what the hop loop's reader calls buy (replayed, no reader call)")
    columns = ("set", "n", "calls", "Plan / reads / Compare", "whole: first -> kept EM", "stop under 1.2: EM, calls")
    for column in (*columns, "stop any: EM, calls"):
        table.add_column(column)
    for spec in args.set:
        name, runs = spec.split("=", 1)
        hop_run, first_run = runs.split(",")
        entry = budget(_rows(hop_run, ("enrichrag_no_enrich",)), _rows(first_run, ("enrichrag_read_first", "enrichrag_no_enrich")))
        result["sets"][name] = {"runs": {"hops": hop_run, "read_first": first_run}} | entry
        whole, steps = entry["read_whole"], entry["reader_steps_per_question"]
        sweep = {str(s["stop_under"]): s for s in entry["stop_at_a_stated_first_read"]}
        table.add_row(
            name,
            str(entry["n"]),
            f"{entry['hops_llm_calls_mean']:.2f}",
            " / ".join(f"{steps[t]:.2f}" for t in READER_STEPS),
            f"{whole['em_first_read']:.3f} -> {whole['em_kept_read']:.3f} (n {whole['n']})",
            *(f"{sweep[k]['em']:.3f} ({sweep[k]['minus_hops']:+.3f}), {sweep[k]['llm_calls_mean']:.2f}" for k in ("1.2", "any")),
        )
    Console().print(table)
    (ROOT / args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
