"""Two evaluation runs of one method on the same questions (e.g. before and after a change of the
reader), or two methods of one run: EM and F1 of each with their intervals, the paired difference
(b - a) with its interval and McNemar's p, overall and per question type. Prints a table and writes JSON.
`--exclude RUN` leaves out the questions of another run: those whose answers were looked at to choose
a change, so what remains measures it on questions it was not chosen on. `--with-step STEP` keeps the
questions whose answer in run b ran that tool (`EnrichGraph`: where enrichment fired; `Bridge`: where
a description was checked), with their share of all. `--slice N`: the runs hold only the questions of a
slice of N that the change can touch (`python -m benchmarks comparison_questions`: a setting that changes only
how comparisons are read); the difference over the whole slice counts the other questions as unchanged.

    python -m benchmarks compare_runs results/2wiki/prompt-baseline-b1be39b results/2wiki/comparisons-7acf40a \
        --method enrichrag_no_enrich --out bench_results/comparisons_2wiki.json
    python -m benchmarks compare_runs results/hotpotqa/dev300-0131a0b results/hotpotqa/dev300-819ef85 \
        --method enrichrag --out bench_results/retry_top_unread_enrichrag.json
    python -m benchmarks compare_runs RUN RUN --method enrichrag_no_enrich --method-b enrichrag --exclude SEEN_RUN --out OUT.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from enrich_rag.eval.stats import bootstrap, compare, paired_rows, with_ci

METRICS = ("em", "f1")


def _rows(run: Path, method: str | None = None) -> list[dict]:
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in rows if method is None or r["method"] == method]


def summary(a: list[dict], b: list[dict]) -> dict:
    a, b = paired_rows(a, b)
    out = compare(b, a, METRICS)  # b - a
    for name, rows in (("a", a), ("b", b)):
        for metric in METRICS:
            score = bootstrap([r[metric] for r in rows]) if rows else None
            out[f"{name}_{metric}"] = [round(score.value, 4), *score.to_list()] if score else None
    return out


def changed_answers(a: list[dict], b: list[dict]) -> list[dict]:
    """The questions answered differently in b: what a change meant to leave alone is checked one by one."""
    a, b = paired_rows(a, b)
    return [
        {
            "id": x["id"],
            "question": x.get("question"),
            "gold": x.get("gold"),
            "a": x.get("prediction"),
            "b": y.get("prediction"),
            "em_a": x["em"],
            "em_b": y["em"],
        }
        for x, y in zip(a, b)
        if x.get("prediction") != y.get("prediction")
    ]


def reader_cost(a: list[dict], b: list[dict]) -> dict:
    """Reader calls and prompt tokens computed per question in each run, paired (b - a), and how many
    questions changed their calls: what a change that should leave the loop alone must leave alone."""
    a, b = paired_rows(a, b)
    out: dict = {"questions_with_other_calls": sum(x.get("llm_calls") != y.get("llm_calls") for x, y in zip(a, b))}
    for key in ("llm_calls", "prefill_tokens"):
        if all(key in r for r in [*a, *b]):
            out[key] = {"a": round(sum(r[key] for r in a) / max(1, len(a)), 3), "b": round(sum(r[key] for r in b) / max(1, len(b)), 3)}
    return out


def over_slice(a: list[dict], b: list[dict], size: int) -> dict:
    """b - a over a slice of `size` questions, the ones the runs do not hold answered alike by both."""
    a, b = paired_rows(a, b)
    if size < len(a):
        raise SystemExit(f"--slice {size} is smaller than the {len(a)} questions both runs answered")
    alike = [{"id": f"unchanged-{i}", "em": 0.0, "f1": 0.0} for i in range(size - len(a))]
    return {"questions_run": len(a)} | compare(b + alike, a + alike, METRICS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the run before (a results/<dataset>/<run> folder)")
    parser.add_argument("b", type=Path, help="the run after")
    parser.add_argument("--method", default="enrichrag_no_enrich")
    parser.add_argument("--method-b", default=None, help="run b's method, when it is not --method")
    parser.add_argument("--exclude", type=Path, default=None, help="leave out the questions of this run")
    parser.add_argument("--with-step", default=None, help="only the questions whose answer in run b ran this tool")
    parser.add_argument("--slice", type=int, default=0, help="the whole slice's size, when the runs hold only what the change can touch")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    method_b = args.method_b or args.method
    left_out = {r["id"] for r in _rows(args.exclude)} if args.exclude else set()
    a = [r for r in _rows(args.a, args.method) if r["id"] not in left_out]
    b = [r for r in _rows(args.b, method_b) if r["id"] not in left_out]
    with_step = None
    if args.with_step:
        ran = {r["id"] for r in b if args.with_step in (r.get("trace") or {}).get("tools", [])}
        paired = {r["id"] for r in a} & {r["id"] for r in b}
        with_step = {"step": args.with_step, "questions": len(ran & paired), "share": round(len(ran & paired) / max(1, len(paired)), 4)}
        a, b = [r for r in a if r["id"] in ran], [r for r in b if r["id"] in ran]
    types = sorted({r.get("type") or "all" for r in a})
    result = {"a": str(args.a), "b": str(args.b), "method": args.method, "method_b": method_b, "overall": summary(a, b)}
    result["changed_answers"] = changed_answers(a, b)
    result["reader"] = reader_cost(a, b)
    if args.slice:
        result["over_slice"] = over_slice(a, b, args.slice)
    if with_step:
        result["with_step"] = with_step
    if args.exclude:
        result["excluded"] = {"run": str(args.exclude), "questions": len(left_out)}
    if len(types) > 1:
        result["by_type"] = {t: summary([r for r in a if r.get("type") == t], [r for r in b if r.get("type") == t]) for t in types}
    table = Table(title=f"{args.b.name} {method_b} - {args.a.name} {args.method} (paired, same questions)")
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
