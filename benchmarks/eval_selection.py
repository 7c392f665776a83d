"""Supporting-passage precision@k / recall@k of evidence selection alone, no LLM (seconds, not an hour).

The full evaluation (`run_evaluation.py`) answers every question with every method; this runs only
the retrieval side of the same code (the PCST evidence tree at each iteration's budget, entity-first
selection and its ablations, PageRank's top passages, and the dense and hybrid top-k baselines) so
selection settings can be compared quickly. `context_all` is the share of questions whose context
(what the reader would read: `pcst@b` for the tree at budget b, which keeps earlier passages) holds every
gold passage; `context_size` its mean number of passages.

    python -m benchmarks eval_selection --config configs/hotpotqa.yaml --out bench_results/selection_hotpotqa.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.retrieval_study import retrieval_study
from enrich_rag.api import EnrichRAG
from enrich_rag.eval.methods import AGENT_METHODS, RETRIEVED
from enrich_rag.eval.metrics import all_evidence_at_k, precision_at_k, recall_at_k
from enrich_rag.eval.stats import bootstrap, paired_difference
from enrich_rag.evidence.enrich_context import enrich_context
from enrich_rag.evidence.query_analysis import analyze_query
from enrich_rag.index.embeddings import search

VARIANTS = ("entity_first", "ef_no_graph", "ef_no_micro_queries", "ef_no_bridges")
BUDGETS = 3  # pcst@k, @k+1, @k+2: the tree's context at each CheckSufficiency iteration


def _dedupe(ids):
    return list(dict.fromkeys(ids))[:RETRIEVED]


def _paired(a: list[dict[str, float]], b: list[dict[str, float]]) -> dict[str, dict]:
    """Mean of a - b on the same questions with its 95% interval, per metric."""
    out = {}
    for m in ("recall@5", "all@5", "context_all"):
        diff = paired_difference([q[m] for q in a], [q[m] for q in b])
        out[m] = {"value": round(diff.value, 4), "ci": diff.to_list()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--out", default="")
    parser.add_argument("--baseline", default="", help="an earlier output of this script (same questions): paired differences")
    parser.add_argument(
        "--variants", nargs="*", default=list(VARIANTS), choices=VARIANTS, help="entity-first variants to run (default: all)"
    )
    args = parser.parse_args()
    config, ev, items = retrieval_study(args.params, args.config, args.limit)
    session = EnrichRAG(config, reconcile=False)
    resources = session.resources
    agents = {name: session.agent(evidence=dataclasses.replace(config.evidence, **AGENT_METHODS[name][1])) for name in args.variants}
    ranker = session.agent()
    budgets = [config.evidence.k + i for i in range(BUDGETS)]
    trees = [f"pcst@{b}" for b in budgets]
    lists = [f"entity_first@{b}" for b in budgets]  # entity-first's k, then PageRank's next passages
    rows: dict[str, list[dict]] = {m: [] for m in ("naive_rag", "hybrid_rag", "graph_only", *trees, *lists, *args.variants)}
    for item in tqdm(items, desc="selecting", unit="question"):
        gold = set(item.gold_docs)
        for name, hybrid in (("naive_rag", False), ("hybrid_rag", True)):
            start = time.perf_counter()
            hits = search(
                resources.corpus_index,
                item.question,
                RETRIEVED * 2,
                dataclasses.replace(config.embeddings, hybrid=hybrid),
                columns=("doc_id",),
            )
            rows[name].append(
                {"docs": _dedupe(h["doc_id"] for h in hits), "gold": gold, "s": time.perf_counter() - start, "read": config.retrieval.top_k}
            )
        analysis = analyze_query(item.question, resources.nlp, resources.store)
        start = time.perf_counter()
        found = ranker.retriever.search(item.question)  # the round's one corpus search
        ranking = ranker.retriever.rank(analysis, found)
        rows["graph_only"].append(
            {"docs": _dedupe(p.doc_id for p in ranking.passages), "gold": gold, "s": time.perf_counter() - start, "read": config.evidence.k}
        )
        start = time.perf_counter()
        selected = ranker.retriever.select(analysis, found, ranking.passages, False, ranker.evidence).passages
        selecting = time.perf_counter() - start
        read: list = []
        for name, listed, budget in zip(trees, lists, budgets):
            start = time.perf_counter()
            sub = enrich_context(item.question, analysis.entities, ranking, config.agent, config.evidence, budget, read, selected)
            read = sub.evidence
            rows[name].append(
                {
                    "docs": _dedupe(p.doc_id for p in sub.passages),
                    "gold": gold,
                    "s": time.perf_counter() - start + selecting,
                    "fact_lines": len(sub.facts),
                }
            )
            order = list({p.id: p for p in [*selected, *ranking.passages]}.values())[:budget]
            rows[listed].append({"docs": _dedupe(p.doc_id for p in order), "gold": gold, "s": selecting})
        for name, agent in agents.items():
            start = time.perf_counter()
            chosen = agent.retriever.select(
                analysis, found, ranking.passages if agent.evidence.graph else (), agent.evidence.graph, agent.evidence
            )
            facts, record = chosen.passages, chosen.record
            rows[name].append(
                {
                    "docs": _dedupe(f.doc_id for f in facts),
                    "gold": gold,
                    "s": time.perf_counter() - start,
                    "stop": record.get("stop_reason"),
                    "kind": analysis.kind,
                }
            )
    summary = {}
    # Per question, so that another build or setting can be compared paired (eval/stats.py: compare).
    per_question: dict[str, list[dict[str, float]]] = {}
    for name, rs in rows.items():
        read_n = [r.get("read", len(r["docs"])) for r in rs]
        per_question[name] = [
            {
                "recall@5": recall_at_k(r["docs"], r["gold"], 5),
                "all@5": all_evidence_at_k(r["docs"], r["gold"], 5),
                "context_all": all_evidence_at_k(r["docs"], r["gold"], n),
            }
            for r, n in zip(rs, read_n)
        ]
        stats: dict[str, float] = {"n": len(rs)}
        for k in ev.ks:
            stats[f"recall@{k}"] = round(statistics.fmean(recall_at_k(r["docs"], r["gold"], k) for r in rs), 4)
            stats[f"precision@{k}"] = round(statistics.fmean(precision_at_k(r["docs"], r["gold"], k) for r in rs), 4)
            stats[f"all@{k}"] = round(statistics.fmean(all_evidence_at_k(r["docs"], r["gold"], k) for r in rs), 4)
        read = [r.get("read", len(r["docs"])) for r in rs]
        stats["context_all"] = round(statistics.fmean(all_evidence_at_k(r["docs"], r["gold"], n) for r, n in zip(rs, read)), 4)
        stats["context_size"] = round(statistics.fmean(min(n, len(r["docs"])) for r, n in zip(rs, read)), 2)
        stats["ms_p50"] = round(1000 * statistics.median(r["s"] for r in rs), 1)
        summary[name] = stats
    table = Table(title=f"evidence selection on {ev.dataset}, {len(items)} questions (no LLM)")
    cols = list(next(iter(summary.values())))
    table.add_column("method")
    for c in cols:
        table.add_column(c, justify="right")
    for name, stats in summary.items():
        table.add_row(name, *(str(stats[c]) for c in cols))
    Console(width=160).print(table)
    # The tree against entity-first's list at each budget (same questions), and each method against a
    # baseline file (another build or code): a difference is read from these, not from two means.
    pairs = {f"{t} - {e}": _paired(per_question[t], per_question[e]) for t, e in zip(trees, lists)}
    if args.baseline:
        before = json.loads(Path(args.baseline).read_text())
        if before["question_ids"] != [item.id for item in items]:
            raise SystemExit(f"{args.baseline}: not the same questions; compare runs of the same --config and --limit")
        earlier = {name: qs for name, qs in before["per_question"].items() if name in per_question}
        pairs |= {f"{name} - baseline": _paired(per_question[name], qs) for name, qs in earlier.items()}
    for pair, diff in pairs.items():
        context = diff["context_all"]
        Console().print(f"{pair}: context_all {context['value']:+.3f} [{context['ci'][0]:+.3f}, {context['ci'][1]:+.3f}]")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(
            json.dumps(
                {
                    "dataset": ev.dataset,
                    "questions": len(items),
                    "k": config.evidence.k,
                    "summary": summary,
                    "paired": pairs,
                    "baseline": args.baseline,
                    "intervals": {
                        name: {m: bootstrap([q[m] for q in qs]).to_list() for m in ("recall@5", "all@5", "context_all")}
                        for name, qs in per_question.items()
                    },
                    "question_ids": [item.id for item in items],
                    "per_question": per_question,
                },
                indent=2,
            )
            + "\n"
        )
    session.close()


if __name__ == "__main__":
    main()
