"""How well the graph ranks passages, read from an evaluation run: recall@k and all-evidence@k of
PageRank's top passages (the `pagerank_top` each graph method records per round), before and after
that question's enrichment; and each method's EM split by whether the passages its reader read held
every gold passage, beside the `oracle` method's EM on the same questions.

A run's own recall@k scores the passages the reader was handed (2 for entity-first, 2 to 6 for
graph_only), so it cannot say what the ranking found at 5 or 10, nor whether an enrichment moved
the ranking when the fixed-k selection kept the same two passages.

    python -m benchmarks graph_recall --run results/2wiki/100q-seed0-qwen2.5-coder-1.5b-instruct
    # -> table + bench_results/graph_recall_2wiki_100q-seed0-qwen2.5-coder-1.5b-instruct.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from enrich_rag.eval.metrics import all_evidence_at_k, recall_at_k
from enrich_rag.eval.runner import read_predictions
from enrich_rag.eval.stats import compare, paired_rows, with_ci

KS = (2, 5, 10)


def ranked_docs(chunk_ids: list[str]) -> list[str]:
    """Chunk ids -> their documents, best first, each once (gold is by document)."""
    return list(dict.fromkeys(c.split("::")[0] for c in chunk_ids))


def summarize(rows: list[dict], gold: dict[str, set[str]]) -> dict[str, dict[str, float]]:
    """Per method and round ('first' = on the graph as the question found it, 'last' = after its enrichment)."""
    out: dict[str, dict[str, float]] = {}
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method and (r.get("trace") or {}).get("pagerank_top") and gold.get(r["id"])]
        if not mine:
            continue
        stats: dict[str, float] = {"n": len(mine), "enriched": sum(bool(r["partitions"]) for r in mine)}
        for when, pick in (("first", 0), ("last", -1)):
            for k in KS:
                docs = [(ranked_docs(r["trace"]["pagerank_top"][pick]), gold[r["id"]]) for r in mine]
                stats[f"{when}_recall@{k}"] = round(statistics.fmean(recall_at_k(d, g, k) for d, g in docs), 4)
                stats[f"{when}_all@{k}"] = round(statistics.fmean(all_evidence_at_k(d, g, k) for d, g in docs), 4)
        out[method] = stats
    return out


def read_docs(row: dict, top_k: int) -> list[str]:
    """The documents the reader read: an agent method's citations (its context), a baseline's top_k hits."""
    chunk_ids = (row.get("trace") or {}).get("chunk_ids")
    return ranked_docs(chunk_ids) if chunk_ids is not None else list(row["evidence_ids"][:top_k])


def by_context(rows: list[dict], gold: dict[str, set[str]], top_k: int) -> dict[str, dict[str, Any]]:
    """EM split by whether the reader's context held every gold document, beside `oracle`'s EM on the
    same questions: where the two agree the reader is at its ceiling, and what is left is recall."""
    oracle = [r for r in rows if r["method"] == "oracle"]
    out: dict[str, dict[str, Any]] = {}
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method and gold.get(r["id"]) and method not in ("oracle", "no_retrieval")]
        if not mine:
            continue
        held_all = [gold[r["id"]] <= set(read_docs(r, top_k)) for r in mine]
        held = [r for r, h in zip(mine, held_all) if h]
        rest = [r for r, h in zip(mine, held_all) if not h]
        stats: dict[str, Any] = {"n": len(mine), "context_all": round(len(held) / len(mine), 4), "held": len(held)}
        for name, part in (("held", held), ("missed", rest)):
            stats[f"em_{name}"] = round(statistics.fmean(r["em"] for r in part), 4) if part else None
            ours, theirs = paired_rows(part, oracle)
            stats[f"oracle_em_{name}"] = round(statistics.fmean(r["em"] for r in theirs), 4) if theirs else None
            stats[f"minus_oracle_{name}"] = compare(ours, theirs, ["em"]) if theirs else None
        out[method] = stats
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--run", required=True, help="an evaluation run's folder (predictions.jsonl, config.yaml)")
    parser.add_argument("--out", default="", help="default: bench_results/graph_recall_<dataset>_<run>.json")
    args = parser.parse_args()
    run = Path(args.run)
    config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    questions = Path(config["paths"]["root"]) / "questions.jsonl"
    gold = {q["id"]: set(q.get("gold_docs") or ()) for q in map(json.loads, questions.read_text(encoding="utf-8").splitlines())}
    rows = read_predictions(run / "predictions.jsonl")
    summary = summarize(rows, gold)
    context = by_context(rows, gold, config["retrieval"]["top_k"])

    table = Table(title=f"{run.name}: PageRank's top passages (first round, and after the question's enrichment)")
    for col in ("method", "round", "n", "enriched", *[f"{m}@{k}" for m in ("recall", "all") for k in KS]):
        table.add_column(col, justify="left" if col in ("method", "round") else "right")
    for method, s in summary.items():
        for when in ("first", "last"):
            if when == "last" and not s["enriched"]:
                continue
            table.add_row(
                method, when, str(s["n"]), str(s["enriched"]), *[f"{s[f'{when}_{m}@{k}']:.3f}" for m in ("recall", "all") for k in KS]
            )
    Console().print(table)
    split = Table(title=f"{run.name}: EM by whether the reader's context held every gold passage (oracle: the same questions)")
    per_part = [f"{c} {name}" for name in ("held", "missed") for c in ("EM", "oracle EM", "EM - oracle")]
    columns = ("method", "n", "context held all", *per_part)
    for col in columns:
        split.add_column(col, justify="left" if col == "method" else "right")
    for method, c in context.items():
        cells = []
        for name in ("held", "missed"):
            diff = c[f"minus_oracle_{name}"] or {}
            cells += ["-" if c[k] is None else f"{c[k]:.3f}" for k in (f"em_{name}", f"oracle_em_{name}")]
            cells.append(with_ci(diff.get("em"), diff.get("em_ci")) or "-")
        split.add_row(method, str(c["n"]), f"{c['context_all']:.3f}", *cells)
    Console().print(split)
    out = Path(args.out or f"bench_results/graph_recall_{config['eval']['dataset']}_{run.name}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"run": str(run), "summary": summary, "by_context": context}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
