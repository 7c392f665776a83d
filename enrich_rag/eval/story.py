"""The enrichment story the demo tells: a bundled question the seed graph answers wrongly or unsurely,
one deep enrichment, the answer again, and what was extracted from which chunk.

Runs on a private copy of the build (`storage/workspace.py`), so the user's graph is untouched and the
story can be told again. The question comes from `data/demo_enrichment.json`, which
`python -m benchmarks pick_demo_question` picks from an evaluation run's predictions (the run is named there):
nothing here is scripted, the answers are the reader's of the day.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from enrich_rag.agent.answer import NOW, Answer
from enrich_rag.agent.trace import Enriched
from enrich_rag.api import EnrichRAG
from enrich_rag.config import Config
from enrich_rag.errors import InputDataError
from enrich_rag.eval.metrics import exact_match
from enrich_rag.eval.runner import ensure_built
from enrich_rag.extract.base import Extractor
from enrich_rag.llm.base import LLM
from enrich_rag.storage.workspace import writable_copy

STORY_FILE = Path("data/demo_enrichment.json")  # relative to the project (beside params.yaml)


def load_story(path: Path = STORY_FILE) -> dict[str, Any]:
    try:
        story = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputDataError(f"{path}: no demo question ({exc}); python -m benchmarks pick_demo_question writes one") from exc
    if not story.get("question") or not story.get("answers"):
        raise InputDataError(f"{path}: needs 'question' and 'answers'")
    return story


def _verdict(answer: Answer, gold: list[str]) -> dict[str, Any]:
    return {
        "answer": answer.answer,
        "correct": bool(exact_match(answer.answer, gold)),
        "sure": answer.sure,
        "perplexity": round(answer.perplexity, 3),
        "citations": [c.source for c in answer.citations],
    }


def tell(
    config: Config, story: dict[str, Any], workdir: Path, llm: LLM | None = None, extractor: Extractor | None = None
) -> dict[str, Any]:
    """Answer without enrichment, then with it (the loop decides), on a copy under `workdir`; `llm` and
    `extractor` default to the configured ones. A dataset's build (a config overlay with questions) is
    built first when it is missing or stale, as an evaluation would."""
    if config.eval.questions:
        ensure_built(config, config.eval)
    session = EnrichRAG(writable_copy(config, workdir), llm=llm, extractor=extractor)
    resources = session.resources
    try:
        # Read as one question: a planned question's hops do not enrich yet, and the story is about enrichment.
        settings = dataclasses.replace(session.config.agent, hops=False), None
        gold = list(story["answers"])
        before = session.ask(story["question"], enrich="never", settings=settings)
        after = session.ask(story["question"], enrich=NOW, settings=settings)  # waits for the round the loop decides on
        rounds = [r.result for r in after.trace.records(Enriched)]
        partitions = [r.partition for r in rounds if r.partition]
        facts = [
            {k: e[k] for k in ("src_name", "relation", "dst_name", "chunk_id", "extractor")}
            for e in (resources.store.rows_of(partitions)[1] if partitions else [])
        ]
        return {
            "question": story["question"],
            "gold": gold,
            "source": story.get("source", ""),
            "before": _verdict(before, gold),
            "after": _verdict(after, gold),
            "enrichment": {"rounds": len(rounds), "partitions": partitions, "chunks": [c for r in rounds for c in r.new_chunks]},
            "facts": facts,
        }
    finally:
        session.close()


def pick(rows: list[dict[str, Any]], seed_method: str = "enrichrag_no_enrich", method: str = "enrichrag") -> dict[str, Any] | None:
    """A question `method` answered right after an enrichment round where `seed_method` (same run) was
    wrong; failing that, one it was right but unsure about and enrichment made sure (the trace's
    `sure`). The first in the run's order."""
    by_question: dict[str, dict[str, dict]] = {}
    for row in rows:
        by_question.setdefault(row["id"], {})[row["method"]] = row
    pairs = [(m[seed_method], m[method]) for m in by_question.values() if seed_method in m and method in m]
    enriched_right = [(s, e) for s, e in pairs if e["em"] and e.get("enrich_rounds")]
    wrong = [(s, e) for s, e in enriched_right if not s["em"]]
    unsure = [(s, e) for s, e in enriched_right if not _sure(s) and _sure(e)]
    for kind, found in (("wrong", wrong), ("unsure", unsure)):
        if found:
            seed, enriched = found[0]
            return {
                "id": enriched["id"],
                "question": enriched["question"],
                "answers": enriched["gold"],
                "seed": kind,
                "seed_answer": seed["prediction"],
                "enriched_answer": enriched["prediction"],
            }
    return None


def _sure(row: dict[str, Any]) -> bool:
    return bool((row.get("trace") or {}).get("sure"))
