"""Does enrichment move retrieval? PageRank recall on a shallow seed, with targeted enrichment, with a
random control, and on the full graph: retrieval only, no reader, one fixed question order.

Arms, per seed share:
    dense       hybrid corpus search, the baseline
    seed        PageRank on the shallow seed graph, never written
    targeted    a copy of the seed; every question: PageRank -> EnrichGraph (its unread top passages,
                then the template expansion query) -> PageRank again; the copy grows over the run
    random      a copy of the seed; every question extracts as many *random* unread chunks as
                `targeted` did for it, through the same commit protocol
    full        PageRank on a graph extracted from every chunk (the ceiling)

`before` numbers of targeted/random show transfer (what earlier questions' enrichments did for later
ones, i.e. for questions that did not trigger them; `transfer` = targeted before - seed); `after - before`
is the gain of a question's own enrichment. `--deep llm` enriches with the reader's deep extraction, as
the agent does (the default, spaCy, is the seed's extractor: fast); `--no-control` skips the random arm.
Each question's row also says where its walk started (the graph-index hits) and how many facts it
walked, on the seed and before its own enrichment, to tell why a ranking moved.

    python -m benchmarks eval_graph_enrichment --config configs/hotpotqa.yaml --shares 0.25 0.5 \
        --out bench_results/graph_enrichment_hotpotqa.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.retrieval_study import retrieval_study
from enrich_rag.agent.enrich_graph import already_read, enrich_graph
from enrich_rag.api import EnrichRAG
from enrich_rag.config import Config
from enrich_rag.eval.metrics import all_evidence_at_k, recall_at_k
from enrich_rag.eval.runner import ensure_built
from enrich_rag.eval.stats import paired_difference
from enrich_rag.evidence.query_analysis import analyze_query
from enrich_rag.extract.factory import make_extractor
from enrich_rag.storage.passages import read_passages
from enrich_rag.storage.schema import SEED_PARTITION
from enrich_rag.storage.workspace import writable_copy

TOP = 10
CANDIDATES = 10  # PageRank passages EnrichGraph may read


def _graph_config(config: Config, root: Path, share: float) -> Config:
    paths = dataclasses.replace(config.paths, graph=str(root / "graph"), graph_index=str(root / "graph_index"))
    return dataclasses.replace(config, paths=paths, extraction=dataclasses.replace(config.extraction, seed_share=share))


def _docs(passages) -> list[str]:
    return list(dict.fromkeys(p.doc_id for p in passages))[:TOP]


def _scores(docs: list[str], gold: set[str]) -> dict[str, float]:
    return {
        "recall@2": recall_at_k(docs, gold, 2),
        "recall@5": recall_at_k(docs, gold, 5),
        "all@5": all_evidence_at_k(docs, gold, 5),
        "recall@10": recall_at_k(docs, gold, 10),
    }


class Arm:
    def __init__(self, config: Config, extractor, deep: str = ""):
        """`extractor` None: the project's deep extractor (`deep`: its name, so chunks only it read count as read)."""
        self.session = EnrichRAG(config, extractor=extractor, reconcile=False)  # one spaCy for every arm, through the extractor
        self.resources = self.session.resources
        self.retrieval = self.resources.retrieval()
        self.deep = deep

    def rank(self, question: str):
        resources = self.resources
        analysis = analyze_query(question, resources.nlp, resources.store)
        hits = self.retrieval.corpus(question, resources.config.retrieval.graph_passages)
        return self.session.agent().retriever.rank(analysis, hits)  # PageRank's top max(evidence.candidates, k): TOP by default

    def enrich(self, question: str, candidates, limit: int):
        resources = self.resources
        return enrich_graph(
            question,
            [],
            corpus=self.retrieval.corpus,
            store=resources.store,
            extractor=lambda: resources.extractor,
            writer=resources.writer,
            llm=None,
            limit_chunks=limit,
            candidates=candidates,
            deep=self.deep,
        )


def _walked(ranking) -> dict[str, Any]:
    """Where a walk started and what it walked: its entry entities (reset keys that are not passages),
    the facts it walked and how many came from enrichments, the graph-index facts it hit from them."""
    hood = ranking.neighbourhood
    return {
        "entry": sorted(k for k in ranking.reset if k not in ranking.dense),
        "facts": len(hood.facts),
        "enriched_facts": sum(f.partition != SEED_PARTITION for f in hood.facts),
        "enriched_hits": sum(h.partition != SEED_PARTITION for h in hood.hits),
        "links": len(hood.links),
    }


def moved(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per question: how many rankings moved at 5, by growth before the question (transfer) and by its own
    round, and how many walks started elsewhere or walked enriched facts before its own round."""
    out: dict[str, Any] = {}
    for m in ("recall@5", "all@5"):
        for name, after, before in (("transfer", "targeted_before", "seed"), ("own", "targeted", "targeted_before")):
            out[f"{name}_{m}"] = {
                "gained": sum(r[after][m] > r[before][m] for r in rows),
                "lost": sum(r[after][m] < r[before][m] for r in rows),
            }
    walks = [r["walk"] for r in rows if "walk" in r]
    out["entry_changed"] = sum(w["seed"]["entry"] != w["before"]["entry"] for w in walks)
    out["walked_enriched_facts"] = sum(w["before"]["enriched_facts"] > 0 for w in walks)
    return out


def study(config: Config, ev, share: float, work: Path, items, extractor, deep: str = "spacy", control: bool = True) -> dict:
    seed_cfg = _graph_config(config, work / f"seed-{share}", share)
    full_cfg = _graph_config(config, work / "full", 1.0)
    for cfg in (seed_cfg, full_cfg):
        ensure_built(cfg, ev)
    for arm in ("targeted", "random"):
        shutil.rmtree(work / f"{arm}-{share}", ignore_errors=True)
    seed, full = Arm(seed_cfg, extractor), Arm(full_cfg, extractor)
    # `--deep llm`: the project's deep extractor (the reader), and a chunk is unread until it read it.
    enrich_with, read_by = (None, "llm") if deep == "llm" else (extractor, "")
    targeted = Arm(writable_copy(seed_cfg, work / f"targeted-{share}"), enrich_with, read_by)
    randomly = Arm(writable_copy(seed_cfg, work / f"random-{share}"), enrich_with, read_by) if control else None
    chunks = read_passages(config.paths.chunks)
    rng = random.Random(0)
    rows = []
    for item in tqdm(items, desc=f"seed share {share}", unit="question"):
        gold, q = set(item.gold_docs), item.question
        seeded = seed.rank(q)
        row: dict[str, Any] = {
            "id": item.id,
            "dense": _scores(_docs(seed.retrieval.corpus(q, TOP * 2)), gold),
            "seed": _scores(_docs(seeded.passages), gold),
            "full": _scores(_docs(full.rank(q).passages), gold),
        }
        ranking = targeted.rank(q)
        row["targeted_before"] = _scores(_docs(ranking.passages), gold)
        row["walk"] = {"seed": _walked(seeded), "before": _walked(ranking)}
        start = time.perf_counter()
        result = targeted.enrich(q, ranking.passages[:CANDIDATES], targeted.resources.config.agent.enrich_chunks)
        row["enrich_s"] = time.perf_counter() - start
        row["targeted"] = _scores(_docs(targeted.rank(q).passages), gold)
        row["new_chunks"] = len(result.new_chunks)
        if randomly is not None:
            row["random_before"] = _scores(_docs(randomly.rank(q).passages), gold)
            read = already_read(randomly.resources.store, [c.id for c in chunks], read_by)
            unread = [c for c in chunks if c.id not in read]
            picked = rng.sample(unread, min(len(result.new_chunks), len(unread)))
            if picked:
                randomly.enrich(q, picked, len(picked))
            row["random"] = _scores(_docs(randomly.rank(q).passages), gold)
        rows.append(row)
    for closing in (seed, full, targeted, *([randomly] if randomly else [])):
        closing.session.close()
    arms = ("dense", "seed", "targeted_before", "targeted", *(("random_before", "random") if control else ()), "full")
    summary = {}
    for arm in arms:
        summary[arm] = {m: round(statistics.fmean(r[arm][m] for r in rows), 4) for m in rows[0]["dense"]}
    summary["own_gain"] = {m: round(summary["targeted"][m] - summary["targeted_before"][m], 4) for m in rows[0]["dense"]}
    if control:
        summary["random_own_gain"] = {m: round(summary["random"][m] - summary["random_before"][m], 4) for m in rows[0]["dense"]}
    summary["transfer"] = {m: round(summary["targeted_before"][m] - summary["seed"][m], 4) for m in rows[0]["dense"]}
    return {
        "share": share,
        "questions": len(rows),
        "summary": summary,
        "chunks_extracted": sum(r["new_chunks"] for r in rows),
        "enrich_p50_s": round(statistics.median(r["enrich_s"] for r in rows), 3),
        "deep": deep,
        # Questions that did not trigger the enrichments before them: their ranking then against the seed's.
        "transfer_paired": {
            m: paired_difference([r["targeted_before"][m] for r in rows], [r["seed"][m] for r in rows]).to_list()
            for m in ("recall@5", "all@5")
        },
        "moved": moved(rows),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config")
    parser.add_argument("--recount", type=Path, help="a saved result: add its per-question counts (`moved`) from its rows")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--shares", type=float, nargs="+", default=[0.25, 0.5])
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--deep", choices=["spacy", "llm"], default="spacy", help="the enrichments' extractor")
    parser.add_argument("--no-control", action="store_true", help="skip the random arm")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    if args.recount:
        saved = json.loads(args.recount.read_text(encoding="utf-8"))
        for result in saved["results"]:
            result["moved"] = moved(result["rows"])
            Console().print(result["moved"])
        args.recount.write_text(json.dumps(saved, indent=2) + "\n")
        return
    if not args.config:
        parser.error("--config is required (or --recount)")
    config, ev, items = retrieval_study(args.params, args.config, args.limit)
    extractor = make_extractor(config.extraction)
    work = Path(config.paths.root) / "enrichment_study"
    results = []
    for share in args.shares:  # each share is printed and saved as soon as it is done: a share takes many minutes
        result = study(config, ev, share, work, items, extractor, args.deep, not args.no_control)
        results.append(result)
        _print(ev.dataset, result)
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps({"dataset": ev.dataset, "results": results}, indent=2) + "\n")


def _print(dataset: str, result: dict) -> None:
    table = Table(
        title=f"{dataset}: retrieval with a {result['share']} seed, {result['questions']} questions, "
        f"{result['chunks_extracted']} chunks extracted (no reader)"
    )
    table.add_column("arm")
    metrics = list(result["summary"]["dense"])
    for m in metrics:
        table.add_column(m, justify="right")
    for arm, stats in result["summary"].items():
        gain = "gain" in arm or arm == "transfer"
        table.add_row(arm, *(f"{stats[m]:+.3f}" if gain else f"{stats[m]:.3f}" for m in metrics))
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
