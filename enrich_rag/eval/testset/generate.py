"""`enrich-rag testset generate`: questions written by the embedded LLM over the user's own graph.

Each question comes from facts the graph holds (candidates.py), is written by the LLM with the
fact's evidence in front of it, and is kept only if it passes every filter (filters.py). The output
is the evaluation's normalised JSONL (question, answers, type, gold doc ids) plus the facts used, so
`run_evaluation.py` scores every method on it unchanged; a report beside it counts what each filter
dropped. Generation takes the better part of an hour on 2 cores, so its progress (kept rows, counts,
candidates tried) is saved after every candidate and a rerun with the same settings goes on from there.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from enrich_rag.config import Config, TestsetConfig
from enrich_rag.errors import InputDataError
from enrich_rag.eval.methods import read_answer
from enrich_rag.eval.prepare import write_jsonl
from enrich_rag.eval.testset import filters
from enrich_rag.eval.testset.candidates import BRIDGE, COMPARISON, KINDS, SINGLE_FACT, Candidate, candidates
from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import comparison_prompt, description_prompt, question_prompt
from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.passages import PassageStore
from enrich_rag.text import content_words

SEPARATOR = "||"
EXAMPLES = 10


@dataclass
class TestsetReport:
    requested: dict[str, int]
    tried: Counter = field(default_factory=Counter)  # kind -> candidates tried
    rejected: dict[str, Counter] = field(default_factory=lambda: {k: Counter() for k in KINDS})  # kind -> filter -> count
    kept: Counter = field(default_factory=Counter)
    moved: int = 0  # bridge questions short of the quota, asked of comparisons instead

    def state(self) -> dict[str, Any]:
        return {"tried": dict(self.tried), "rejected": {k: dict(v) for k, v in self.rejected.items()}, "kept": dict(self.kept)}

    def restore(self, state: dict[str, Any]) -> None:
        self.tried, self.kept = Counter(state["tried"]), Counter(state["kept"])
        self.rejected = {k: Counter(state["rejected"].get(k, {})) for k in KINDS}

    def survival(self) -> dict[str, dict[str, Any]]:
        """Per kind, per filter in order: how many reached it, and the share that passed."""
        out: dict[str, dict[str, Any]] = {}
        for kind in KINDS:
            reaching, rows = self.tried[kind], {}
            for name in filters.FILTERS:
                if name == filters.NEEDS_BOTH and kind != BRIDGE:
                    continue
                dropped = self.rejected[kind][name]
                if reaching or dropped:
                    rows[name] = {
                        "checked": reaching,
                        "rejected": dropped,
                        "passed_share": round((reaching - dropped) / reaching, 3) if reaching else None,
                    }
                reaching -= dropped
            out[kind] = rows
        return out

    def to_json(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        total = sum(self.kept.values())
        return {
            "requested": self.requested,
            "moved_to_comparison": self.moved,
            "tried": dict(self.tried),
            "kept": dict(self.kept),
            "total": total,
            "multi_hop_share": round((self.kept[BRIDGE] + self.kept[COMPARISON]) / total, 3) if total else 0.0,
            "filters": self.survival(),
            "examples": examples,
        }


def quotas(n: int, multi_hop: float, comparison: float) -> dict[str, int]:
    multi = round(n * multi_hop)
    compare = round(multi * comparison)
    return {SINGLE_FACT: n - multi, BRIDGE: multi - compare, COMPARISON: compare}


def _clean(text: str) -> str:
    text = text.strip().splitlines()[0].strip() if text.strip() else ""
    for prefix in ("Question:", "Q:"):
        if text.startswith(prefix):
            text = text[len(prefix) :].strip()
    return text.strip("\"'“” ")


def write_question(llm: LLM, candidate: Candidate, facts: list[str], persona: str, max_new_tokens: int) -> tuple[str, str]:
    """(question, reference answer); a comparison of numbers gets its answer from the writer."""
    if candidate.kind == BRIDGE:
        return compose_bridge(llm, candidate, facts, persona=persona, max_new_tokens=max_new_tokens), candidate.answer
    if candidate.kind == SINGLE_FACT:
        prompt = question_prompt(facts, candidate.answer, persona)
    else:
        prompt = comparison_prompt(facts, candidate.entities, persona, answer=candidate.answer)
    text = _write(llm, prompt, max_new_tokens)
    if candidate.answer:
        return text.partition(SEPARATOR)[0].strip(), candidate.answer
    question, _, answer = text.partition(SEPARATOR)
    return question.strip(), answer.strip().rstrip(".")


def _write(llm: LLM, prompt, max_new_tokens: int) -> str:
    return _clean(llm.generate(prompt, max_new_tokens=max_new_tokens, stop=("\n",)).text)


def compose_bridge(llm: LLM, candidate: Candidate, facts: list[str], persona: str, max_new_tokens: int) -> str:
    """A question about the bridge entity from the second fact, with the entity's name then swapped
    for a phrase told through the first fact ("Where is Raven Software based?" -> "Where is the
    developer of Necrodome based?"). A 1.5B writer asked for both hops at once names the bridge
    three times in four (measured); two small asks it does well. "" when the name is not there to swap."""
    question = _write(llm, question_prompt(facts[1:], candidate.answer, persona), max_new_tokens)
    phrase = _write(llm, description_prompt(facts[0], candidate.bridge), max_new_tokens).rstrip(".?")
    for form in dict.fromkeys((candidate.bridge, candidate.bridge.split(" (")[0])):
        composed = swap_in(question, form, phrase)
        if composed:
            return composed
    return ""


_ARTICLES = r"\b(?:the|a|an)\s"
_ARTICLE_AT_END = re.compile(_ARTICLES + r"+$", re.IGNORECASE)


def swap_in(question: str, name: str, phrase: str) -> str:
    """`question` with `name` replaced by `phrase`; an article before the name goes when the phrase
    brings its own ("the the developer of ..." was a measured flaw). "" when the name is not there."""
    at = question.casefold().find(name.casefold())
    if not name or not phrase or at < 0:
        return ""
    head = question[:at]
    if re.match(_ARTICLES, phrase, re.IGNORECASE) and _ARTICLE_AT_END.search(head):
        head = _ARTICLE_AT_END.sub("", head)
    composed = head + phrase + question[at + len(name) :]
    return composed[:1].upper() + composed[1:]


def item_id(candidate: Candidate) -> str:
    return f"syn-{candidate.kind}-" + hashlib.sha1("|".join(candidate.key).encode()).hexdigest()[:10]


def _row(candidate: Candidate, question: str, answer: str, persona: str) -> dict[str, Any]:
    return {
        "id": item_id(candidate),
        "question": question,
        "answers": [answer],
        "type": candidate.kind,
        "gold_doc_ids": list(candidate.doc_ids),
        "gold_chunk_ids": list(candidate.chunk_ids),
        "facts": [
            {
                "subject": f.subject,
                "relation": f.relation,
                "object": f.object,
                "evidence": f.evidence,
                "chunk_id": f.chunk_id,
                "doc_id": f.doc_id,
            }
            for f in candidate.facts
        ],
        "persona": persona,
    }


class Generator:
    """One candidate at a time through the writer and the filters; the first filter failed is counted."""

    def __init__(self, settings: TestsetConfig, llm: LLM, passages: PassageStore, reader_tokens: int):
        self.settings, self.llm, self.passages, self.reader_tokens = settings, llm, passages, reader_tokens
        self.read = lambda question, texts: read_answer(llm, question, texts, max_new_tokens=reader_tokens)
        self.kept_words: list[set[str]] = []

    def persona(self, candidate: Candidate) -> str:
        """Drawn from the candidate and the seed, not from a running draw: a resumed run asks as an
        uninterrupted one would."""
        if not self.settings.personas:
            return ""
        digest = hashlib.sha1(f"{self.settings.seed}|{'|'.join(candidate.key)}".encode()).hexdigest()
        return self.settings.personas[int(digest[:8], 16) % len(self.settings.personas)]

    def attempt(self, candidate: Candidate) -> tuple[dict[str, Any] | None, str]:
        """(row, "") when kept, else (None, the filter that rejected it)."""
        wanted = [*candidate.chunk_ids, *candidate.distractors]
        found = {p.id: p for p in self.passages.by_ids(wanted)}
        if len(found) != len(set(wanted)):
            raise InputDataError(f"the graph cites chunks missing from the corpus ({wanted}): rebuild with `dvc repro`")
        texts = [found[c].content for c in candidate.chunk_ids]
        distractors = [found[c].content for c in candidate.distractors]
        facts = [f"{found[f.chunk_id].title}: {f.evidence}" if found[f.chunk_id].title else f.evidence for f in candidate.facts]
        persona = self.persona(candidate)
        question, answer = write_question(self.llm, candidate, facts, persona=persona, max_new_tokens=self.settings.max_new_tokens)
        checks = (
            (filters.WELL_FORMED, lambda: filters.well_formed(question, answer, candidate.entities, bridge=candidate.bridge)),
            (filters.ANSWER_IN_GOLD, lambda: filters.answer_in_gold(answer, texts)),
            (filters.NOT_DUPLICATE, lambda: not filters.is_duplicate(question, self.kept_words, self.settings.duplicate_overlap)),
            (filters.ANSWERABLE, lambda: filters.answerable(self.read, question, answer, passages=texts)),
            # A comparison's two facts are about two entities in two passages by construction; one
            # passage alone leaves a coin toss, which this greedy check cannot tell from knowing.
            (
                filters.NEEDS_BOTH,
                lambda: (
                    candidate.kind != BRIDGE or filters.needs_both(self.read, question, answer, passages=texts, distractors=distractors)
                ),
            ),
            (
                filters.NOT_TRIVIA,
                lambda: filters.not_trivia(
                    self.llm, question, answer, max_new_tokens=self.reader_tokens, binary=candidate.kind == COMPARISON
                ),
            ),
        )
        for name, check in checks:
            if not check():
                return None, name
        self.kept_words.append(content_words(question))
        return _row(candidate, question, answer, persona=persona), ""


def generate_testset(
    config: Config, llm: LLM, out: Path | None = None, n: int | None = None, multi_hop: float | None = None, progress: bool = True
) -> tuple[Path, dict[str, Any]]:
    settings = config.testset
    n = settings.n if n is None else n
    multi_hop = settings.multi_hop if multi_hop is None else multi_hop
    if n < 1 or not 0.0 <= multi_hop <= 1.0:
        raise InputDataError(f"--n must be >= 1 and --multi-hop between 0 and 1 (got {n}, {multi_hop})")
    out = Path(out or settings.out)
    wanted = quotas(n, multi_hop, settings.comparison)
    report = TestsetReport(dict(wanted))
    progress_file, key = progress_path(out), _settings_key(config, n, multi_hop)
    saved = _load_progress(progress_file, key)
    rows: list[dict[str, Any]] = saved.get("rows", [])
    seen: set[tuple[str, ...]] = {tuple(k) for k in saved.get("seen", [])}
    if saved:
        report.restore(saved["report"])
    from enrich_rag.api import EnrichRAG

    with EnrichRAG(config, reconcile=False, llm=llm) as rag:
        store, passages = rag.resources.store, rag.resources.passages
        pools = candidates(store, settings.seed)
        generator = Generator(settings, llm, passages, reader_tokens=config.llm.max_new_tokens)
        generator.kept_words = [content_words(r["question"]) for r in rows]
        with tqdm(total=n, initial=len(rows), desc="writing questions", unit="question", disable=not progress) as bar:
            for kind in KINDS:
                if kind == COMPARISON:  # the multi-hop share holds: comparisons make up for bridges the graph could not give
                    report.moved = max(0, wanted[BRIDGE] - report.kept[BRIDGE])
                    wanted[COMPARISON] += report.moved
                for candidate in pools[kind]:
                    if report.kept[kind] >= wanted[kind] or report.tried[kind] >= wanted[kind] * settings.attempts:
                        break
                    if candidate.key in seen:
                        continue
                    seen.add(candidate.key)
                    report.tried[kind] += 1
                    row, rejected_by = generator.attempt(candidate)
                    if row is None:
                        report.rejected[kind][rejected_by] += 1
                    else:
                        rows.append(row)
                        report.kept[kind] += 1
                        bar.update(1)
                    _save_progress(progress_file, key, rows, seen=seen, report=report)
    if not rows:
        raise InputDataError(f"no question survived the filters ({dict(report.tried)} tried): is the graph built and non-empty?")
    examples = random.Random(settings.seed).sample(rows, min(EXAMPLES, len(rows)))
    summary = report.to_json(examples)
    write_jsonl(out, rows)
    with atomic_file(report_path(out)) as tmp:
        tmp.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    progress_file.unlink(missing_ok=True)
    return out, summary


def report_path(out: Path) -> Path:
    return out.with_name(out.stem + ".report.json")


def progress_path(out: Path) -> Path:
    return out.with_name(out.stem + ".progress.json")


def _settings_key(config: Config, n: int, multi_hop: float) -> str:
    """What the draw and the questions depend on: a rerun with other settings starts over."""
    data = {
        "testset": dataclasses.asdict(config.testset),
        "n": n,
        "multi_hop": multi_hop,
        "llm": [config.llm.backend, config.llm.model, config.llm.max_new_tokens],
        "graph": str(config.paths.graph),
    }
    return hashlib.sha1(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _load_progress(path: Path, key: str) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return {}  # written atomically, so only a hand-edited file gets here; start over
    return saved if saved.get("key") == key else {}


def _save_progress(path: Path, key: str, rows: list[dict[str, Any]], seen: set[tuple[str, ...]], report: TestsetReport) -> None:
    with atomic_file(path) as tmp:
        tmp.write_text(
            json.dumps({"key": key, "rows": rows, "seen": sorted(seen), "report": report.state()}, ensure_ascii=False), encoding="utf-8"
        )
