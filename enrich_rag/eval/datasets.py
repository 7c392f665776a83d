"""QA benchmarks as `QAItem`s: the bundled normalised JSONL, and each benchmark's original files.

Gold passages are named by document id: for multi-hop sets the id of a (title, text) paragraph in
the pooled corpus (`stable_doc_id`, so duplicate titles with different texts stay apart, as
MuSiQue needs); for NQ the corpus ids the dataset gives. TriviaQA ships no gold passages.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from enrich_rag.errors import InputDataError
from enrich_rag.ingest.documents import stable_doc_id

FORMATS = ("normalized", "hotpotqa", "2wiki", "musique", "nq", "triviaqa")


@dataclass(frozen=True)
class QAItem:
    id: str
    question: str
    answers: tuple[str, ...]
    type: str = ""
    gold_docs: tuple[str, ...] = ()
    contexts: tuple[tuple[str, str], ...] = ()  # (title, text) paragraphs shipped with the question
    # MuSiQue's gold chain: (sub-question with #n slots, sub-answer, the doc id of its paragraph) per hop
    hops: tuple[tuple[str, str, str], ...] = ()

    @property
    def has_gold(self) -> bool:
        return bool(self.gold_docs)


def _paragraph(title: str, sentences: list[Any] | str) -> tuple[str, str]:
    text = sentences if isinstance(sentences, str) else "".join(str(s) for s in sentences)
    return str(title), text.strip()


def _item(qid: Any, question: Any, answers: Any, type_: str = "", gold_docs=(), contexts=(), where: str = "") -> QAItem:
    if not isinstance(question, str) or not question.strip():
        raise InputDataError(f"{where}: question is missing or empty")
    if isinstance(answers, str):
        answers = [answers]
    if not isinstance(answers, list) or not answers:
        raise InputDataError(f"{where}: no answers")
    return QAItem(
        str(qid),
        question.strip(),
        tuple(str(a) for a in answers),
        type=str(type_ or ""),
        gold_docs=tuple(gold_docs),
        contexts=tuple(contexts),
    )


def _json_rows(path: Path) -> Iterator[tuple[str, dict]]:
    """JSONL, or one JSON array (HotpotQA/2Wiki/DPR), or TriviaQA's {"Data": [...]}."""
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and '"Data"' in stripped[:2000] and "\n{" not in stripped[:2000]):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputDataError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from exc
        rows = data["Data"] if isinstance(data, dict) and "Data" in data else data
        if not isinstance(rows, list):
            raise InputDataError(f"{path}: expected a list of questions")
        for i, row in enumerate(rows):
            yield f"{path}[{i}]", row
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield f"{path}:{lineno}", json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputDataError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from exc


def _gold_from_contexts(contexts: list[tuple[str, str]], indices) -> tuple[str, ...]:
    return tuple(dict.fromkeys(stable_doc_id(*contexts[i]) for i in indices if 0 <= i < len(contexts)))


def _normalized(row: dict, where: str) -> QAItem:
    contexts = [_paragraph(c["title"], c["sentences"]) for c in row.get("contexts") or []]
    indices = row.get("supporting_context_idx")
    if indices is None:  # older files: by title
        titles = set(row.get("supporting_titles") or [])
        indices = [i for i, (t, _) in enumerate(contexts) if t in titles]
    gold = _gold_from_contexts(contexts, indices) or tuple(str(d) for d in row.get("gold_doc_ids") or [])
    item = _item(
        row.get("id"), row.get("question"), row.get("answers"), type_=row.get("type", ""), gold_docs=gold, contexts=contexts, where=where
    )
    return dataclasses.replace(item, hops=_gold_hops(row.get("decomposition"), contexts, "support_idx"))


def _gold_hops(steps: Any, contexts: list[tuple[str, str]], index_key: str) -> tuple[tuple[str, str, str], ...]:
    """A gold decomposition as (sub-question, sub-answer, doc id); none when any step lacks its paragraph."""
    hops = []
    for step in steps or []:
        i = step.get(index_key)
        if not isinstance(i, int) or not 0 <= i < len(contexts):
            return ()
        hops.append((str(step.get("question", "")), str(step.get("answer", "")), stable_doc_id(*contexts[i])))
    return tuple(hops)


def _hotpot_like(row: dict, where: str) -> QAItem:
    """HotpotQA and 2WikiMultihopQA original JSON: context = [[title, [sentences]]]."""
    contexts = [_paragraph(t, s) for t, s in row.get("context") or []]
    titles = {t for t, _ in row.get("supporting_facts") or []}
    indices = [i for i, (t, _) in enumerate(contexts) if t in titles]
    return _item(
        row.get("_id", row.get("id")),
        row.get("question"),
        row.get("answer"),
        type_=row.get("type", ""),
        gold_docs=_gold_from_contexts(contexts, indices),
        contexts=contexts,
        where=where,
    )


def _musique(row: dict, where: str) -> QAItem:
    paragraphs = row.get("paragraphs") or []
    contexts = [_paragraph(p["title"], p["paragraph_text"]) for p in paragraphs]
    indices = [i for i, p in enumerate(paragraphs) if p.get("is_supporting")]
    answers = [row.get("answer"), *(row.get("answer_aliases") or [])]
    qid = str(row.get("id", ""))
    item = _item(
        qid,
        row.get("question"),
        [a for a in answers if a],
        type_=qid.split("__")[0],
        gold_docs=_gold_from_contexts(contexts, indices),
        contexts=contexts,
        where=where,
    )
    return dataclasses.replace(item, hops=_gold_hops(row.get("question_decomposition"), contexts, "paragraph_support_idx"))


def _answers(row: dict) -> Any:
    for key in ("answers", "golden_answers", "answer"):
        if row.get(key):
            return row[key]
    answer = row.get("Answer")  # TriviaQA original
    if isinstance(answer, dict):
        return [answer.get("Value"), *(answer.get("Aliases") or [])]
    return None


def _open_domain(row: dict, where: str) -> QAItem:
    """NQ-Open JSONL, DPR JSON (positive_ctxs), FlashRAG JSONL (golden_answers), TriviaQA JSON."""
    gold = [str(c.get("passage_id", c.get("id"))) for c in row.get("positive_ctxs") or [] if c.get("passage_id", c.get("id"))]
    gold += [str(d) for d in row.get("gold_doc_ids") or []]
    qid = row.get("id", row.get("QuestionId", row.get("question_id", where)))
    answers = _answers(row)
    if isinstance(answers, list):
        answers = [a for a in answers if a]
    return _item(
        qid, row.get("question", row.get("Question")), answers, type_=row.get("type", "factoid"), gold_docs=gold, contexts=(), where=where
    )


_READERS = {
    "normalized": _normalized,
    "hotpotqa": _hotpot_like,
    "2wiki": _hotpot_like,
    "musique": _musique,
    "nq": _open_domain,
    "triviaqa": _open_domain,
}


def load_questions(path: Path | str, fmt: str) -> list[QAItem]:
    path = Path(path)
    if fmt not in _READERS:
        raise InputDataError(f"unknown question format '{fmt}' (expected one of: {', '.join(FORMATS)})")
    if not path.is_file():
        raise InputDataError(f"question file not found: {path}")
    reader = _READERS[fmt]
    items = []
    for where, row in _json_rows(path):
        if not isinstance(row, dict):
            raise InputDataError(f"{where}: expected a JSON object")
        try:
            items.append(reader(row, where))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputDataError(f"{where}: not a {fmt} record ({exc.__class__.__name__}: {exc})") from exc
    if not items:
        raise InputDataError(f"{path}: no questions")
    return items


def sample(items: list[QAItem], n: int, seed: int) -> list[QAItem]:
    """A seeded sample in file order (0 or >= len: all)."""
    if n <= 0 or n >= len(items):
        return list(items)
    keep = set(random.Random(seed).sample(range(len(items)), n))
    return [item for i, item in enumerate(items) if i in keep]


def pooled_corpus(items: list[QAItem]) -> list[dict[str, str]]:
    """One passage per distinct (title, text) over all questions' paragraphs: retrieval over a shared pool."""
    docs: dict[str, dict[str, str]] = {}
    for item in items:
        for title, text in item.contexts:
            if text:
                doc_id = stable_doc_id(title, text)
                docs.setdefault(doc_id, {"id": doc_id, "title": title, "text": text})
    return list(docs.values())
