"""Benchmark the agent loop: p50/p95 latency per tool and end to end over bundled HotpotQA questions,
without enrichment and with exactly one enrichment round; and graph-index upsert vs full rebuild
for 100 new nodes. Runs on a copy of the built data (the real graph is never written).

For the enrichment run, the facts of those questions' supporting passages are removed from the
copy's seed graph (and its index), so EnrichGraph has real gaps to fill: the situation the loop is
for. Those questions are disjoint from the no-enrichment ones.

    python -m benchmarks agent --questions 50 --enrich-questions 10 (-> bench_results/agent_<reader>.json)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from enrich_rag.agent.answer import NOW
from enrich_rag.agent.trace import Enriched, Read
from enrich_rag.api import EnrichRAG, Settings
from enrich_rag.config import load_config
from enrich_rag.index.embeddings import build_index, open_index
from enrich_rag.llm.models import model_name
from enrich_rag.storage.passages import read_passages
from enrich_rag.storage.workspace import remove_seed_facts, writable_copy


def _pct(values: list[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def _run(
    session: EnrichRAG, settings: Settings | None, questions: list[str], allow_enrich: bool, label: str, only_enriched: bool = False
) -> dict:
    """Latency per tool and end to end; with `only_enriched`, over the questions that wrote a partition."""
    per_tool: dict[str, list[float]] = defaultdict(list)
    totals, rounds, iterations = [], [], []
    per_iteration: dict[int, list[float]] = defaultdict(list)  # CheckSufficiency seconds of the i-th read
    for q in tqdm(questions, desc=label, unit="q"):
        answer = session.ask(q, enrich=NOW if allow_enrich else "never", settings=settings)
        rounds.append(len(answer.trace.partitions_written))
        checks = [s.seconds for s in answer.trace.steps if isinstance(s.record, Read)]
        iterations.append(len(checks))
        for i, seconds in enumerate(checks, 1):
            per_iteration[i].append(seconds)
        if only_enriched and not answer.trace.partitions_written:
            continue
        totals.append(answer.trace.seconds)
        tool_time: dict[str, float] = defaultdict(float)
        for step in answer.trace.steps:
            tool_time[step.kind] += step.seconds
            if isinstance(step.record, Enriched):
                for part, seconds in step.record.result.seconds.items():
                    tool_time[f"EnrichGraph.{part}"] += seconds
        for tool, seconds in tool_time.items():
            per_tool[tool].append(seconds)
    out = {"questions": len(questions), "measured": len(totals), "mean_partitions_written": statistics.mean(rounds)}
    out |= {f"share_{n}_iterations": iterations.count(n) / len(iterations) for n in sorted(set(iterations))}
    out |= {f"iteration_{i}_p50_s": _pct(v)[0] for i, v in sorted(per_iteration.items())}
    if totals:
        out["end_to_end_p50_s"], out["end_to_end_p95_s"] = _pct(totals)
    for tool, values in sorted(per_tool.items()):
        out[f"{tool}_p50_s"], out[f"{tool}_p95_s"] = _pct(values)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--enrich-questions", type=int, default=20)
    parser.add_argument("--skip-rebuild", action="store_true")
    parser.add_argument("--out", default="", help="default: bench_results/agent_<reader>.json")
    args = parser.parse_args()
    config = load_config(args.params)
    rows = [json.loads(line) for line in Path(config.corpus.source).read_text().splitlines() if line.strip()]
    questions = [r["question"] for r in rows[: args.questions]]
    enrich_rows = rows[args.questions : args.questions + args.enrich_questions]
    results: dict = {"reader": model_name(config.llm), "llm_backend": config.llm.backend}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = writable_copy(config, Path(tmp) / "copy", with_corpus=True)
        session = EnrichRAG(cfg)
        resources = session.resources
        t0 = time.perf_counter()
        session.ask(questions[0], enrich="never")  # warm-up: model and index loads
        results["warmup_s"] = time.perf_counter() - t0
        results["no_enrich"] = _run(session, None, questions, False, "no enrichment")
        titles = {t for r in enrich_rows for t in r["supporting_titles"]}
        results["edges_removed_for_enrichment"] = remove_seed_facts(
            resources.writer, {p.id for p in read_passages(cfg.paths.chunks) if p.title in titles}
        )
        one_round = dataclasses.replace(cfg.agent, max_enrich_rounds=1)
        results["one_enrich_round"] = _run(
            session, (one_round, None), [r["question"] for r in enrich_rows], True, "one enrichment round", only_enriched=True
        )

        # Upsert 100 new nodes vs rebuilding the whole graph index.
        docs = [doc for p in resources.store.partitions for doc in resources.store.index_documents(p)]
        new = [
            {
                "id": f"nbench{i}",
                "text": f"Benchmark entity {i}. A synthetic node number {i}.",
                "kind": "node",
                "name": f"Benchmark entity {i}",
                "partition": "bench",
            }
            for i in range(100)
        ]
        index = open_index(cfg.paths.graph_index, cfg.embeddings)
        t0 = time.perf_counter()
        index.upsert(new)
        upsert_s = time.perf_counter() - t0
        results["upsert_100_nodes_s"] = upsert_s
        results["graph_index_docs"] = len(docs)
        if not args.skip_rebuild:
            t0 = time.perf_counter()
            build_index(docs + new, cfg.embeddings, Path(tmp) / "rebuilt", "rebuild")
            results["rebuild_s"] = time.perf_counter() - t0
            results["rebuild_over_upsert"] = results["rebuild_s"] / upsert_s
    table = Table(title="agent latency (seconds)")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in results.items():
        if isinstance(value, dict):
            for k, v in value.items():
                table.add_row(f"{key}.{k}", f"{v:.3f}" if isinstance(v, float) else str(v))
        else:
            table.add_row(key, f"{value:.3f}" if isinstance(value, float) else str(value))
    Console().print(table)
    out = Path(args.out or f"bench_results/agent_{model_name(config.llm)}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
