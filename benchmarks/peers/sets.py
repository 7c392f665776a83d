"""What every system of the peers benchmark is handed alike: a set's first n questions, its corpus (a dev
set's: the questions' own paragraphs; a documentation folder's: its pages), the reader's settings, and the
answer scoring; and where each system's files go."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from enrich_rag.config import LLMConfig, load_config
from enrich_rag.eval.datasets import QAItem, load_questions
from enrich_rag.eval.metrics import contains_answer, exact_match, token_f1
from enrich_rag.ingest.sections import stable_doc_id
from enrich_rag.storage.atomic import atomic_file

ROOT = Path(__file__).resolve().parents[2]
SETS = {"hotpotqa": ("data/benchmarks/hotpotqa_distractor/dev.jsonl", "normalized")}
FOLDERS = {"npm": "data/own_documents/npm-docs"}  # docs/ (Markdown pages) and questions.jsonl
OPEN_RUN = "index_run_open.json"  # the running index's checkpoint
CONTEXT_TOKENS = 8192  # the reader's window for every system (an extraction prompt with its gleaning turn outgrows 4,096)


def questions(name: str, n: int) -> list[QAItem]:
    if name in FOLDERS:
        lines = (ROOT / FOLDERS[name] / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        return [QAItem(f"{name}-{i}", row["question"], tuple(row["answers"])) for i, row in enumerate(rows)][:n]
    path, fmt = SETS[name]
    return load_questions(ROOT / path, fmt)[:n]


def corpus(name: str, items: list[QAItem]) -> list[tuple[str, str, str]]:
    """(document, title, text) of the set's corpus: a folder's every page whatever the questions (as its user
    would index it), a dev set's paragraphs of the questions asked."""
    if name in FOLDERS:
        pages = sorted((ROOT / FOLDERS[name] / "docs").glob("*.md"))
        return [(page.stem, page.stem, page.read_text(encoding="utf-8")) for page in pages]
    return paragraphs(items)


def corpus_chars(name: str, n: int) -> int:
    """How much text a system indexes for a set at n questions (what an extracting index's cost follows)."""
    return sum(len(text) for *_, text in corpus(name, questions(name, n)))


def paragraphs(items: list[QAItem]) -> list[tuple[str, str, str]]:
    """(question id, title, paragraph) of every question's paragraphs, a paragraph two questions share once."""
    seen: set[str] = set()
    found = []
    for item in items:
        for title, text in item.contexts:
            if title not in seen:
                seen.add(title)
                found.append((item.id, title, text))
    return found


def documents(units: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """The corpus as the LightRAG family takes it: one document per question (its paragraphs not already
    given, each under its title) or per page."""
    by_document: dict[str, list[str]] = {}
    for document, title, text in units:
        by_document.setdefault(document, []).append(text if title == document else f"{title}\n{text}")
    return [(document, "\n\n".join(parts)) for document, parts in by_document.items()]


def reader_config() -> LLMConfig:
    """The project's reader (llama.cpp, Qwen2.5 1.5B, greedy) with the window every system gets."""
    return dataclasses.replace(load_config(ROOT / "params.yaml").llm, context_tokens=CONTEXT_TOKENS)


def gold_paragraphs(item: QAItem) -> list[tuple[str, str]]:
    """(title, text) of the question's gold paragraphs, as shipped with it (none for a folder's question)."""
    return [(title, text) for title, text in item.contexts if stable_doc_id(title, text) in item.gold_docs]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def gold_held(item: QAItem, handed: str, span: int = 8) -> list[str]:
    """The titles of the gold paragraphs whose text the reader was handed: at least half of the paragraph's
    runs of `span` words appear in what it got, punctuation, case and a peer's JSON escaping aside. A title
    alone is not enough (the question often names it), and half is enough (a peer's chunk may cut a
    paragraph at its edge)."""
    seen = " " + " ".join(_words(handed.replace("\\n", "\n"))) + " "  # a JSON-escaped line break is still one
    held = []
    for title, text in gold_paragraphs(item):
        words = _words(text)
        starts = {*range(0, max(1, len(words) - span + 1), span // 2), max(0, len(words) - span)}  # its end too
        runs = [" ".join(words[i : i + span]) for i in sorted(starts)]
        if sum(f" {run} " in seen for run in runs) * 2 >= len(runs):
            held.append(title)
    return held


def gold_in_read(item: QAItem, docs: list[str]) -> list[str]:
    """The titles of the gold paragraphs among the documents EnrichRAG handed its reader: a folder build
    names each `corpus.jsonl#<title>`, the gold read each by its stable id."""
    read = {doc.split("#", 1)[-1] for doc in docs}
    return [title for title, text in gold_paragraphs(item) if title in read or stable_doc_id(title, text) in read]


def score(answer: str, gold: list[str]) -> dict[str, float]:
    return {"em": exact_match(answer, gold), "f1": token_f1(answer, gold), "contained": contains_answer(answer, gold)}


def folder_path(system: str, name: str, n: int, root: Path = ROOT) -> Path:
    """A system's working folder for a set (its index, its run log) under results/peers/: only the reader's
    replies and the run log are committed (.gitignore), so an index resumes on a fresh machine."""
    return root / "results" / "peers" / f"{system}-{name}-{n}q"


def folder(system: str, name: str, n: int) -> Path:
    path = folder_path(system, name, n)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write(result: dict[str, Any], system: str, name: str, n: int, stage: str, out: Path | None = None) -> Path:
    path = out or ROOT / "bench_results" / f"peers_{system}_{name}_{n}q_{stage}.json"
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "answers"}, indent=2))
    return path


def checkpoint(folder_: Path, run: dict[str, Any]) -> None:
    """The index run so far, rewritten as it goes: a run killed mid-index (a session's end) still counts
    what it spent, added to the log as interrupted by the next run (`fold_interrupted`)."""
    with atomic_file(folder_ / OPEN_RUN) as tmp:
        tmp.write_text(json.dumps(run), encoding="utf-8")


def fold_interrupted(folder_: Path) -> None:
    """Log the last checkpoint of a run that never finished (its reader time was spent all the same)."""
    found = folder_ / OPEN_RUN
    if found.exists():
        _append(folder_, json.loads(found.read_text(encoding="utf-8")) | {"interrupted": True})
        found.unlink()


def _append(folder_: Path, run: dict[str, Any]) -> Path:
    log = folder_ / "index_runs.jsonl"
    with log.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(run) + "\n")
    return log


def logged_run(folder_: Path, run: dict[str, Any]) -> dict[str, Any]:
    """Add a finished index run to the folder's log (its own checkpoint then goes) and return it with the
    totals over every run: a resumed index costs the sum of its runs, a killed one's checkpoint included
    (folded in by `fold_interrupted` when the next run starts), and peaks at the highest of them. CPU
    seconds are summed beside wall seconds because a run may share the cores with other work, which
    stretches its wall time and not its CPU time; they are None when a run in the log did not record them."""
    log = _append(folder_, run)
    (folder_ / OPEN_RUN).unlink(missing_ok=True)
    runs = _runs(log)
    tokens = {key: sum(r["reader_tokens_this_run"][key] for r in runs) for key in run["reader_tokens_this_run"]}
    cpu = [r.get("cpu_seconds_this_run") for r in runs]
    return run | {
        "runs": len(runs),
        "seconds_all_runs": round(sum(r["seconds_this_run"] for r in runs), 1),
        "cpu_seconds_all_runs": None if None in cpu else round(sum(c for c in cpu if c is not None), 1),
        "reader_calls_all_runs": sum(r.get("reader_calls_this_run", 0) for r in runs),
        "reader_tokens_all_runs": tokens,
        "peak_rss_mb_all_runs": max(r.get("peak_rss_mb", 0) for r in runs),
    }


def spent_so_far(folder_: Path) -> dict[str, Any] | None:
    """What an index still being built has spent: its logged runs and the running one's checkpoint (None
    when no run has started), so a side by side can say a peer's index is under way, not just missing."""
    log, running = folder_ / "index_runs.jsonl", folder_ / OPEN_RUN
    runs = (_runs(log) if log.exists() else []) + ([json.loads(running.read_text(encoding="utf-8"))] if running.exists() else [])
    if not runs:
        return None
    return {
        "runs": len(runs),
        "seconds": round(sum(r["seconds_this_run"] for r in runs), 1),
        "reader_calls": sum(r.get("reader_calls_this_run", 0) for r in runs),
    }


def _runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


class _Counting(logging.Handler):
    def __init__(self, counts: Counter[str]):
        super().__init__(logging.WARNING)
        self.counts = counts

    def emit(self, record: logging.LogRecord) -> None:
        self.counts[record.name.split(".")[0]] += 1


@contextlib.contextmanager
def warnings_logged(loggers: tuple[str, ...]) -> Iterator[Counter[str]]:
    """Count the warnings and errors the peers log while they work, by package: their own record of the
    reader's replies they could not parse (a missing delimiter, a relation short of fields), which an
    extraction that still kept something would otherwise hide."""
    counts: Counter[str] = Counter()
    handler = _Counting(counts)
    for name in loggers:
        logging.getLogger(name).addHandler(handler)
    try:
        yield counts
    finally:
        for name in loggers:
            logging.getLogger(name).removeHandler(handler)
