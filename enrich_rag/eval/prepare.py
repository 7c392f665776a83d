"""Stage `eval_prepare`: sample the questions and write the corpus the offline stages then build.

Multi-hop sets: the corpus is the union of the sampled questions' paragraphs. Single-hop sets
(NQ, TriviaQA): the configured passage corpus, read and validated through the same reader.
"""

from __future__ import annotations

import json
from pathlib import Path

from enrich_rag.config import Config, EvalConfig
from enrich_rag.errors import InputDataError
from enrich_rag.eval.datasets import QAItem, load_questions, pooled_corpus, sample
from enrich_rag.ingest.documents import read_jsonl_documents
from enrich_rag.storage.atomic import atomic_file


def questions_path(config: Config) -> Path:
    return Path(config.paths.root) / "questions.jsonl"


def sampled_questions(ev: EvalConfig) -> list[QAItem]:
    return sample(load_questions(ev.questions, ev.format), ev.sample, ev.seed)


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def prepare_eval(config: Config, ev: EvalConfig) -> dict[str, int]:
    items = sampled_questions(ev)
    if ev.over_built_corpus:  # written over this build (a synthetic test set): nothing to pool or copy
        return {"questions": len(items), "passages": 0}
    if items[0].contexts:
        docs = pooled_corpus(items)
    elif ev.corpus:
        if not Path(ev.corpus).is_file():
            raise InputDataError(f"corpus file not found: {ev.corpus} (set eval.corpus to your passage JSONL)")
        docs = [{"id": d.doc_id, "title": d.title, "text": d.text} for d in read_jsonl_documents(Path(ev.corpus))]
    else:
        raise InputDataError(f"{ev.questions}: questions carry no paragraphs; set eval.corpus to a passage JSONL")
    write_jsonl(
        questions_path(config),
        [{"id": i.id, "question": i.question, "answers": list(i.answers), "type": i.type, "gold_docs": list(i.gold_docs)} for i in items],
    )
    write_jsonl(Path(config.corpus.source), docs)
    return {"questions": len(items), "passages": len(docs)}
