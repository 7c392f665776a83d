"""EnrichRAG from the peers benchmark's runner: the same corpus (the questions' own paragraphs), the same
reader and MiniLM, the same questions and scoring as the peers.

- index: the corpus written as a folder (one passage per titled paragraph, as its own dev builds pool them)
  and built as a user builds a folder (`EnrichRAG.from_folder`: chunks, the hybrid corpus index, the spaCy
  seed graph, the graph index). The build takes no reader: its reader calls and tokens are none by
  construction, and the run says so rather than counting a reader it never loads.
- answer: `default`, the served default's read (`ask` read-only: background enrichment runs after an
  answer and never changes it), `naive_rag`, the plain dense baseline (MiniLM top k, one read), and on a
  dev set `oracle`, the reader handed each question's gold paragraphs: what any system on this reader
  could reach by retrieving perfectly.

    python -m benchmarks.peers.run --system enrichrag --set hotpotqa --questions 30 --stage index
    python -m benchmarks.peers.run --system enrichrag --set hotpotqa --questions 30 --stage answer
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import time
from collections.abc import Callable
from typing import Any

from benchmarks.peers import sets
from enrich_rag.api import EnrichRAG
from enrich_rag.eval.datasets import QAItem
from enrich_rag.eval.methods import CountingLLM, Prediction, make_method, read_answer, timed
from enrich_rag.ingest.sections import stable_doc_id
from enrich_rag.llm.factory import make_llm
from enrich_rag.stages.folder import build_folder
from enrich_rag.storage.passages import Passage

METHODS = {"default": "enrichrag_no_enrich", "naive_rag": "naive_rag"}
CHANGES = ["corpus: each titled paragraph one passage (the peers get each question's paragraphs joined as one document)"]


def index(args: argparse.Namespace) -> dict[str, Any]:
    items = sets.questions(args.set, args.questions)
    work = sets.folder("enrichrag", args.set, args.questions)
    shutil.rmtree(work / "docs", ignore_errors=True)
    shutil.rmtree(work / "workspace", ignore_errors=True)  # built from nothing, as the peers' indexes are
    (work / "index_runs.jsonl").unlink(missing_ok=True)  # so its cost is this run's, not the sum of rebuilds
    units = sets.corpus(args.set, items)
    if args.set in sets.FOLDERS:  # a documentation folder: built as its user builds it, from its pages
        shutil.copytree(sets.ROOT / sets.FOLDERS[args.set] / "docs", work / "docs")
    else:
        (work / "docs").mkdir()
        passages = [{"id": title, "title": title, "text": text} for _, title, text in units]
        (work / "docs" / "corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages), encoding="utf-8")
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    build_folder(work / "docs", work / "workspace", sets.ROOT / "params.yaml")
    seconds, cpu_seconds = time.perf_counter() - start, _cpu_seconds() - cpu_start
    usage = [resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    run = {
        "documents": len(units),
        "seconds_this_run": round(seconds, 1),
        "cpu_seconds_this_run": round(cpu_seconds, 1),
        "reader_calls_this_run": 0,
        "reader_tokens_this_run": {"prefill_tokens": 0, "cached_tokens": 0, "generated_tokens": 0},
        "peak_rss_mb": round(max(usage) / 1024),
        "bytes_on_disk": sum(f.stat().st_size for f in (work / "workspace").rglob("*") if f.is_file()),
    }
    return {"index": sets.logged_run(work, run)}


def _cpu_seconds() -> float:
    """This process's CPU time and its finished children's (the build may run its stages as processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def gold_read(reader: CountingLLM, max_new_tokens: int) -> Callable[[QAItem], Prediction]:
    """The project's one-shot oracle, its gold paragraphs taken from the question itself: the peers' corpus
    is written under titles, so the pooled corpus's document ids the gold names are not in this index."""

    def run(item: QAItem) -> Prediction:
        gold = [Passage(title, doc, title, text) for title, text in item.contexts if (doc := stable_doc_id(title, text)) in item.gold_docs]
        texts = [p.content for p in gold]
        docs = [p.doc_id for p in gold]
        return Prediction(read_answer(reader, item.question, texts, max_new_tokens), docs, texts, read=docs)

    return timed(reader, run)


def answer(args: argparse.Namespace) -> dict[str, Any]:
    items = sets.questions(args.set, args.questions)
    work = sets.folder("enrichrag", args.set, args.questions)
    reader = CountingLLM(make_llm(sets.reader_config()))
    rag = EnrichRAG.open(sets.ROOT / "params.yaml", work / "workspace" / "config.yaml", llm=reader)
    methods = {name: make_method(method, rag, reader) for name, method in METHODS.items()}
    if args.set not in sets.FOLDERS:  # a folder's questions name no gold page
        methods["oracle"] = gold_read(reader, rag.resources.config.llm.max_new_tokens)
    rows = []
    try:
        for item in items:
            for name, run in methods.items():
                prediction = run(item)
                rows.append(
                    {"id": item.id, "mode": name, "answer": prediction.answer, "gold": list(item.answers)}
                    | sets.score(prediction.answer, list(item.answers))
                    | {"seconds": round(prediction.seconds, 2), "reader_calls": prediction.llm_calls, "tokens": prediction.tokens}
                    | {"read_docs": prediction.read}  # what the reader was handed: the peers' rows record their contexts too
                    | {"gold_in_context": sets.gold_in_read(item, prediction.read)}
                    | {"gold_paragraphs": len(sets.gold_paragraphs(item))}
                )
    finally:
        rag.close()
    return {"answers": rows}


def run(args: argparse.Namespace) -> dict[str, Any]:
    changes = [] if args.set in sets.FOLDERS else CHANGES  # a folder is built as its user builds it
    methods = METHODS if args.set in sets.FOLDERS else METHODS | {"oracle": "the gold paragraphs, read once"}
    head = {"system": "enrichrag", "set": args.set, "questions": args.questions, "changes": changes, "methods": methods}
    return head | (index(args) if args.stage == "index" else answer(args))
