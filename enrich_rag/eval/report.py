"""Methods x metrics: metrics.json (DVC metrics), table.md, DVC plot data and PNG plots."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.config import Config, EvalConfig
from enrich_rag.eval.judge import trust_note
from enrich_rag.eval.stats import bootstrap, compare, with_ci
from enrich_rag.llm.models import model_name
from enrich_rag.storage.atomic import atomic_file

ANSWER_METRICS = ("em", "f1", "acc")
# Scores shown with their 95% bootstrap interval; pairs of methods are compared on these.
INTERVAL_METRICS = ("em", "f1", "acc", "recall@5", "all@5", "recall@2", "all@2")
PAIRED_METRICS = ("em", "f1")
JUDGE_METRICS = ("faithfulness", "answer_relevance", "context_relevance", "correctness", "judge_aggregate")
TOKEN_KEYS = ("prefill_tokens", "cached_tokens", "generated_tokens")  # per question, where the reader counts them


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def aggregate(rows: list[dict[str, Any]], ev: EvalConfig) -> dict[str, dict[str, Any]]:
    """Per method: every mean, the headline scores with their 95% bootstrap interval (`<metric>_ci`)."""
    out: dict[str, dict[str, Any]] = {}
    for method in ev.methods:
        mine = [r for r in rows if r["method"] == method]
        if not mine:
            continue
        seconds = [r["seconds"] for r in mine]
        stats: dict[str, Any] = {"n": len(mine)}
        for key in (*ANSWER_METRICS, *[f"{m}@{k}" for m in ("recall", "all", "precision") for k in ev.ks], *JUDGE_METRICS):
            value = _mean([r[key] for r in mine if key in r])
            if value is not None:
                stats[key] = value
                if key in INTERVAL_METRICS:
                    stats[f"{key}_ci"] = bootstrap([r[key] for r in mine if key in r], ev.bootstrap, ev.seed).to_list()
        stats |= unsure_flag(mine) | iterations(mine)
        stats |= {
            "llm_calls": _mean([r["llm_calls"] for r in mine]),
            **{key: value for key in TOKEN_KEYS if (value := _mean([r[key] for r in mine if key in r])) is not None},
            "enrich_rounds": _mean([r["enrich_rounds"] for r in mine]),
            "partitions_written": sum(len(r["partitions"]) for r in mine),
            "latency_p50_s": _percentile(seconds, 0.5),
            "latency_p95_s": _percentile(seconds, 0.95),
        }
        out[method] = stats
    return out


def unsure_flag(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How well "unsure" (perplexity still over the threshold) flags a wrong answer: the share flagged,
    the flag's precision (flagged answers that are wrong) and recall (wrong answers that are flagged)."""
    judged = [r for r in rows if "sure" in (r.get("trace") or {})]
    if not judged:
        return {}
    flagged = [r for r in judged if not r["trace"]["sure"]]
    wrong = [r for r in judged if not r["em"]]
    caught = [r for r in flagged if not r["em"]]
    return {
        "unsure_share": _mean([float(r in flagged) for r in judged]),
        "unsure_precision": round(len(caught) / len(flagged), 4) if flagged else None,
        "unsure_recall": round(len(caught) / len(wrong), 4) if wrong else None,
    }


def iterations(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """CheckSufficiency iterations per question (each reads one passage more): mean, share per count, and
    the p50 seconds of each iteration's read (later ones extend the cached prompt)."""
    counts = [r["trace"]["iterations"] for r in rows if "iterations" in (r.get("trace") or {})]
    if not counts:
        return {}
    out: dict[str, Any] = {"iterations": _mean(counts)}
    out |= {f"iterations_{n}": round(counts.count(n) / len(counts), 4) for n in sorted(set(counts))}
    per = [r["trace"].get("iteration_seconds", []) for r in rows if "iterations" in (r.get("trace") or {})]
    for i in range(max((len(p) for p in per), default=0)):
        out[f"iteration_{i + 1}_p50_s"] = _percentile([p[i] for p in per if len(p) > i], 0.5)
    return out


def pairwise(rows: list[dict[str, Any]], ev: EvalConfig) -> list[dict[str, Any]]:
    """Every pair of methods in the run: the paired difference (first - second) on the same questions,
    with its interval, and McNemar's exact p for EM."""
    methods = [m for m in ev.methods if any(r["method"] == m for r in rows)]
    mine = {m: [r for r in rows if r["method"] == m] for m in methods}
    return [
        {"first": a, "second": b} | compare(mine[a], mine[b], PAIRED_METRICS, resamples=ev.bootstrap, seed=ev.seed)
        for i, a in enumerate(methods)
        for b in methods[i + 1 :]
    ]


def columns(summary: dict[str, dict[str, Any]]) -> list[str]:
    return [k for k in dict.fromkeys(key for stats in summary.values() for key in stats) if not k.endswith("_ci")]


def cell(stats: dict[str, Any], col: str) -> str:
    value = stats.get(col)
    if value is None:
        return ""
    return with_ci(value, stats[f"{col}_ci"]) if f"{col}_ci" in stats else str(value)


def markdown_table(summary: dict[str, dict[str, Any]], title: str) -> str:
    cols = columns(summary)
    lines = [
        f"### {title}",
        "",
        "Scores with their 95% bootstrap interval.",
        "",
        "| method | " + " | ".join(cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for method, stats in summary.items():
        lines.append(f"| {method} | " + " | ".join(cell(stats, c) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def paired_markdown(pairs: list[dict[str, Any]]) -> str:
    lines = [
        "### Paired differences (first - second, same questions)",
        "",
        "95% bootstrap interval over questions resampled together; McNemar's exact p on EM.",
        "",
        "| first | second | n | EM diff | F1 diff | McNemar p |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for p in pairs:
        lines.append(
            f"| {p['first']} | {p['second']} | {p['n']} | {with_ci(p.get('em'), p.get('em_ci'))} | "
            f"{with_ci(p.get('f1'), p.get('f1_ci'))} | {p.get('em_mcnemar_p', '')} |"
        )
    return "\n".join(lines) + "\n"


WIDE_COLUMNS = (
    "n",
    "em",
    "f1",
    "acc",
    "recall@5",
    "all@5",
    "precision@5",
    "judge_aggregate",
    "llm_calls",
    "prefill_tokens",
    "generated_tokens",
    "partitions_written",
    "latency_p50_s",
    "latency_p95_s",
)
# What fits an 80-column terminal: (summary key, header). table.md and `--wide` have the rest.
NARROW_COLUMNS = (("n", "n"), ("em", "EM"), ("em", "EM 95%"), ("f1", "F1"), ("all@5", "all@5"), ("latency_p50_s", "p50 s"))


def _short(value: float) -> str:
    return f"{value:+.2f}" if value < 0 else f"{value:.2f}"


def narrow_cell(stats: dict[str, Any], key: str, header: str) -> str:
    value = stats.get(key)
    if value is None:
        return ""
    if header.endswith("95%"):
        ci = stats.get(f"{key}_ci")
        return f"{_short(ci[0])}-{_short(ci[1])}" if ci else ""
    if key == "latency_p50_s":
        return f"{value:.1f}"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def print_table(summary: dict[str, dict[str, Any]], title: str, wide: bool = False) -> None:
    """The headline columns (every console column with `wide`); table.md and metrics.json have them all."""
    table = Table(title=title)
    table.add_column("method", overflow="fold")
    present = columns(summary)
    cols = [(c, c) for c in WIDE_COLUMNS if c in present] if wide else [(k, h) for k, h in NARROW_COLUMNS if k in present]
    for _, header in cols:
        table.add_column(header, justify="right", no_wrap=True)
    for method, stats in summary.items():
        table.add_row(method, *((cell(stats, k) if wide else narrow_cell(stats, k, h)) for k, h in cols))
    Console().print(table)


def print_pairs(pairs: list[dict[str, Any]], wide: bool = False) -> None:
    """EM differences with their intervals (F1 and McNemar's p too with `wide`); bold: the interval excludes 0."""
    table = Table(title="paired, first - second (95% interval)")
    headers = ("first", "second", "n", "EM diff", *(("F1 diff", "McNemar p") if wide else ()))
    for col in headers:
        table.add_column(col, justify="left" if col in ("first", "second") else "right", overflow="fold")
    for p in pairs:
        sure = p.get("em_ci") and (p["em_ci"][0] > 0 or p["em_ci"][1] < 0)
        em = with_ci(p.get("em"), p.get("em_ci")) if wide else _signed_ci(p.get("em"), p.get("em_ci"))
        extra = (with_ci(p.get("f1"), p.get("f1_ci")), str(p.get("em_mcnemar_p", ""))) if wide else ()
        table.add_row(p["first"], p["second"], str(p["n"]), f"[bold]{em}[/bold]" if sure else em, *extra)
    Console().print(table)


def _signed_ci(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return ""
    return f"{value:+.3f}" + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "")


def _write(path: Path, text: str) -> None:
    with atomic_file(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_plot_data(rows: list[dict[str, Any]], summary: dict[str, dict[str, Any]], ev: EvalConfig, plots: Path) -> None:
    """Flat JSON rows that `dvc plots show` renders (see the `plots:` section of dvc.yaml)."""
    recall = [{"method": m, "k": k, "recall": s[f"recall@{k}"]} for m, s in summary.items() for k in ev.ks if f"recall@{k}" in s]
    per_method = [{"method": m, "metric": key, "value": s[key]} for m, s in summary.items() for key in ("em", "f1", "acc")]
    latency = [{"method": r["method"], "question": r["id"], "seconds": r["seconds"]} for r in rows]
    for name, data in (("recall_at_k.json", recall), ("metric_per_method.json", per_method), ("latency.json", latency)):
        _write(plots / name, json.dumps(data, indent=1) + "\n")


def write_pngs(rows: list[dict[str, Any]], summary: dict[str, dict[str, Any]], ev: EvalConfig, plots: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        Console(stderr=True).print("matplotlib not installed (pip install 'enrich-rag[eval]'): PNG plots skipped")
        return []
    methods = list(summary)
    written = []
    fig, ax = plt.subplots(figsize=(max(6, len(methods) * 1.2), 4))
    width = 0.25
    for i, key in enumerate(("em", "f1", "acc")):
        ax.bar([x + i * width for x in range(len(methods))], [summary[m].get(key, 0) for m in methods], width, label=key)
    ax.set_xticks([x + width for x in range(len(methods))], methods, rotation=30, ha="right")
    ax.set_ylabel("score")
    ax.set_title(f"{ev.dataset}: answer quality per method")
    ax.legend()
    written.append(_save(fig, plots / "metric_per_method.png"))
    fig, ax = plt.subplots(figsize=(6, 4))
    for m in methods:
        ks = [k for k in ev.ks if f"recall@{k}" in summary[m]]
        if ks:
            ax.plot(ks, [summary[m][f"recall@{k}"] for k in ks], marker="o", label=m)
    ax.set_xlabel("k")
    ax.set_ylabel("supporting-passage recall@k")
    ax.set_title(f"{ev.dataset}: recall@k")
    ax.legend(fontsize=7)
    written.append(_save(fig, plots / "recall_at_k.png"))
    fig, ax = plt.subplots(figsize=(max(6, len(methods) * 1.2), 4))
    ax.boxplot([[r["seconds"] for r in rows if r["method"] == m] for m in methods])
    ax.set_xticks(range(1, len(methods) + 1), methods, rotation=30, ha="right")
    ax.set_ylabel("seconds per question")
    ax.set_yscale("log")
    ax.set_title(f"{ev.dataset}: latency")
    written.append(_save(fig, plots / "latency.png"))
    return written


def _save(fig, path: Path) -> str:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    with atomic_file(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    return str(path)


def write_report(rows: list[dict[str, Any]], ev: EvalConfig, config: Config, run_dir: Path, wide: bool = False) -> dict[str, Any]:
    summary = aggregate(rows, ev)
    pairs = pairwise(rows, ev)
    questions = len({r["id"] for r in rows})
    title = f"{ev.dataset}, {questions} questions, run {ev.run_id}"
    note = judge_note = ""
    if ev.judge.enabled:
        judge_model = model_name(config.llm) if ev.judge.backend == "same" else ev.judge.model or model_name(config.llm)
        judge_note = trust_note(Path(config.paths.dvc_root), judge_model)
        note = f"\n{judge_note}\n"
    metrics = {
        "dataset": ev.dataset,
        "run_id": ev.run_id,
        "questions": questions,
        "llm": config.llm.backend,
        "llm_model": model_name(config.llm),
        "embeddings": config.embeddings.model,
        "methods": summary,
        "paired_differences": pairs,
    }
    if judge_note:
        metrics["judge_trust"] = judge_note
    _write(run_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    _write(run_dir / "table.md", markdown_table(summary, title) + "\n" + paired_markdown(pairs) + note)
    plots = run_dir / "plots"
    write_plot_data(rows, summary, ev, plots=plots)
    write_pngs(rows, summary, ev, plots=plots)
    print_table(summary, title, wide)
    print_pairs(pairs, wide)
    Console().print(f"every column: {run_dir / 'table.md'}" + ("" if wide else " (or --wide)"))
    if judge_note:
        Console().print(judge_note)
    return metrics
