"""Add 50 documents to the bundled build, then remove 10, one `add` / `remove` at a time, and ask about them.

The documents are 2WikiMultihopQA dev passages the bundled (HotpotQA) corpus lacks: the gold passages
of 2Wiki questions, in file order, so there are questions about them. On a private copy of the bundled
build (its own DVC repository; the project's data is untouched), each document is added on its own
(`EnrichRAG.add`, what `enrich-rag add` runs, in one process with the models loaded) and timed; then
questions whose gold passages were added are asked with the default reader and no enrichment; then the
gold passages of the first questions are removed, one at a time, and those questions asked again:
their answers must no longer cite them. Ends with `GraphWriter.verify` (partitions, both indexes, DVC).

    python -m benchmarks add_remove_documents --out bench_results/corpus_update.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.api import EnrichRAG
from enrich_rag.config import load_config
from enrich_rag.eval.metrics import exact_match
from enrich_rag.storage.passages import read_passages
from enrich_rag.storage.workspace import writable_copy

TWOWIKI = Path("data/datasets/2wiki")


def documents_and_questions(bundled_titles: set[str], documents: int) -> tuple[list[dict], list[dict]]:
    """2Wiki gold passages the bundled corpus lacks (whole questions' worth), and those questions."""
    corpus = {row["id"]: row for row in map(json.loads, (TWOWIKI / "corpus.jsonl").read_text().splitlines())}
    docs: dict[str, dict] = {}
    questions = []
    for row in map(json.loads, (TWOWIKI / "questions.jsonl").read_text().splitlines()):
        gold = [corpus[d] for d in row["gold_docs"] if d in corpus]
        if len(gold) != len(row["gold_docs"]) or any(g["title"] in bundled_titles for g in gold):
            continue
        whole = len(docs | {g["id"]: g for g in gold}) <= documents
        for g in gold:  # the last question's passages may not all fit: it is then not asked
            if len(docs) < documents:
                docs.setdefault(g["id"], g)
        if whole:
            questions.append(row)
        if len(docs) >= documents:
            break
    return list(docs.values()), questions


def _ask(session: EnrichRAG, question: dict) -> dict[str, Any]:
    t0 = time.perf_counter()
    answer = session.ask(question["question"], enrich="never")
    return {
        "question": question["question"],
        "gold_docs": question["gold_docs"],
        "answer": answer.answer,
        "em": exact_match(answer.answer, question["answers"]),
        "sure": answer.sure,
        "cited_docs": sorted({c.doc_id for c in answer.citations}),
        "cites_gold": bool({c.doc_id for c in answer.citations} & set(question["gold_docs"])),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _timed(doc: str, seconds: float, update: Any) -> dict[str, Any]:
    record = update.record()
    record["seconds_steps"] = record.pop("seconds")
    return {"doc": doc, "seconds": seconds} | record


def _p50(values: list[float]) -> float:
    return round(statistics.median(values), 3) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--documents", type=int, default=50)
    parser.add_argument("--remove", type=int, default=10)
    parser.add_argument("--questions", type=int, default=10, help="asked after adding (the first ones' gold passages are removed)")
    parser.add_argument("--out", default="bench_results/corpus_update.json")
    args = parser.parse_args()

    from enrich_rag.api import EnrichRAG

    console = Console(stderr=True)
    base = load_config(args.params)
    titles = {p.title for p in read_passages(base.paths.chunks)}
    docs, questions = documents_and_questions(titles, args.documents)
    with tempfile.TemporaryDirectory() as tmp:
        config = writable_copy(base, Path(tmp) / "copy", with_corpus=True)
        session = EnrichRAG(config)
        resources = session.resources
        t0 = time.perf_counter()
        resources.warm(enrich=False)
        _ = resources.seed_extractor
        load_s = time.perf_counter() - t0

        adds = []
        for i, doc in enumerate(docs):
            path = Path(tmp) / "docs" / f"{doc['id']}.jsonl"
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
            t0 = time.perf_counter()
            update = session.add(path)
            adds.append(_timed(doc["id"], time.perf_counter() - t0, update))
            console.print(f"add {i + 1}/{len(docs)} {doc['title']}: {adds[-1]['seconds']:.2f} s, {update.partition}")

        asked = questions[: args.questions]
        after_add = [_ask(session, q) for q in asked]
        for row in after_add:
            console.print(f"Q {row['question']} -> {row['answer']!r} cites gold: {row['cites_gold']}")

        doomed_questions: list[dict] = []
        doomed: list[str] = []
        for q in asked:
            if len(doomed) + len(q["gold_docs"]) > args.remove:
                break
            doomed_questions.append(q)
            doomed += q["gold_docs"]
        removes = []
        for doc_id in doomed:
            t0 = time.perf_counter()
            update = session.remove(doc_id)
            removes.append(_timed(doc_id, time.perf_counter() - t0, update))
            console.print(f"remove {doc_id}: {removes[-1]['seconds']:.2f} s")
        after_remove = [_ask(session, q) for q in doomed_questions]
        problems = resources.writer.verify()
        counts = resources.store.counts()
        session.close()

    added_ids = {d["id"] for d in docs}
    result = {
        "corpus": os.path.relpath(base.corpus.source),  # the bundled data, not this machine's path
        "documents_added": len(adds),
        "documents_removed": len(removes),
        "model_load_s": round(load_s, 2),
        "add_p50_s": _p50([a["seconds"] for a in adds]),
        "add_max_s": round(max(a["seconds"] for a in adds), 3),
        "remove_p50_s": _p50([r["seconds"] for r in removes]),
        "remove_max_s": round(max(r["seconds"] for r in removes), 3),
        "chunks_added": sum(a["chunks_added"] for a in adds),
        "chunks_removed": sum(r["chunks_removed"] for r in removes),
        "nodes_added": sum(a["nodes"] for a in adds),
        "edges_added": sum(a["edges"] for a in adds),
        "links_added": sum(a["links"] for a in adds),
        "add_step_p50_s": {k: _p50([a["seconds_steps"][k] for a in adds if k in a["seconds_steps"]]) for k in adds[0]["seconds_steps"]},
        "questions_after_add": len(after_add),
        "answered_citing_added_gold": sum(r["cites_gold"] for r in after_add),
        "answered_citing_any_added": sum(bool(set(r["cited_docs"]) & added_ids) for r in after_add),
        "em_after_add": round(sum(r["em"] for r in after_add) / len(after_add), 3),
        "questions_after_remove": len(after_remove),
        "citing_removed_after_remove": sum(bool(set(r["cited_docs"]) & set(doomed)) for r in after_remove),
        "verify": problems,
        "graph_after": {"nodes": counts["nodes"], "edges": counts["edges"], "partitions": len(counts["partitions"])},
        "adds": adds,
        "removes": removes,
        "answers_after_add": after_add,
        "answers_after_remove": after_remove,
    }
    table = Table(title=f"add {len(adds)} documents to the bundled build, then remove {len(removes)}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key in (
        "add_p50_s",
        "add_max_s",
        "remove_p50_s",
        "remove_max_s",
        "chunks_added",
        "chunks_removed",
        "answered_citing_added_gold",
        "questions_after_add",
        "citing_removed_after_remove",
        "questions_after_remove",
    ):
        table.add_row(key, str(result[key]))
    table.add_row("verify", "consistent" if not problems else "; ".join(problems))
    Console().print(table)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
