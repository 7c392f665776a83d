"""What the graph's growth pays on the questions that come after: streams of related questions, each later
question compared, paired, with the same question on the graph as built (read-only) and after an
unrelated question (the control).

Related pairs are dev questions that share a supporting page (MuSiQue: pairs that also share a hop of
their gold decomposition, the same page and sub-answer, come first), the earlier one by dev order; a
question is in one pair at most. Three streams, each on its own writable copy of the build:
  grown      earlier question (writes allowed: its facts learned, its round queued) -> the queue runs
             -> later question (writes allowed) -> the queue runs; then every earlier question asked
             again (read-only): the same question asked again, second ask against first
  control    the same, but the question before each later one is drawn at random from the dev
             questions in no pair (seeded): growth that is not about the later question
  read-only  the later questions on the graph as built
`--jobs learn` runs only the learned facts' jobs (an enrichment round, 20-30 s of deep extraction
each, stays queued): the payoff of learned facts alone. `--jobs all` runs both kinds.

    python -m benchmarks later_questions --config configs/musique.yaml --pairs 19 --jobs learn \
        --out bench_results/later_questions_musique.json
    python -m benchmarks later_questions --folder data/own_documents/npm-docs --out bench_results/later_questions_npm.json

A folder (`--folder`, a user's own documents): its questions.jsonl, then related_questions.jsonl (each
line names the question it is related to), built as a user would; the control asks the pair before's
question before each related one, so a related question's own question comes only after it.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from enrich_rag.agent.trace import Recalled
from enrich_rag.api import EnrichRAG
from enrich_rag.config import Config
from enrich_rag.eval.datasets import QAItem
from enrich_rag.eval.methods import CountingLLM
from enrich_rag.eval.metrics import exact_match, token_f1
from enrich_rag.eval.prepare import sampled_questions
from enrich_rag.eval.runner import ensure_built, load_eval
from enrich_rag.eval.stats import paired_difference
from enrich_rag.llm.factory import make_llm
from enrich_rag.llm.models import model_name
from enrich_rag.storage.enrichment_jobs import LEARN
from enrich_rag.storage.workspace import writable_copy


def related_pairs(items: list[QAItem], limit: int) -> list[tuple[QAItem, QAItem, str]]:
    """(earlier, later, what they share): pairs sharing a gold hop first, then a supporting page."""
    candidates = []
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            pages = set(a.gold_docs) & set(b.gold_docs)
            if not pages:
                continue
            hops = {(doc, answer.casefold()) for _, answer, doc in a.hops} & {(doc, answer.casefold()) for _, answer, doc in b.hops}
            candidates.append((0 if hops else 1, items.index(a), items.index(b), "hop" if hops else "page"))
    used: set[str] = set()
    pairs = []
    for _, i, j, shared in sorted(candidates):
        a, b = items[i], items[j]
        if a.id in used or b.id in used:
            continue
        used |= {a.id, b.id}
        pairs.append((a, b, shared))
    return sorted(pairs, key=lambda p: items.index(p[0]))[:limit]


def _ask(session: EnrichRAG, llm: CountingLLM, item: QAItem, enrich: str) -> dict[str, Any]:
    before = llm.calls
    answer = session.ask(item.question, enrich=enrich)
    uses = Counter(r.use for r in answer.trace.records(Recalled))
    return {
        "id": item.id,
        "question": item.question,
        "prediction": answer.answer,
        "em": exact_match(answer.answer, list(item.answers)),
        "f1": round(token_f1(answer.answer, list(item.answers)), 4),
        "llm_calls": llm.calls - before,
        "seconds": answer.trace.seconds,
        "recalled_answered": uses["answered"],
        "recalled_read": uses["read"],
        "hops": len(answer.chain),
    }


def _run_queue(session: EnrichRAG, jobs: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    done = session.enrich_pending(kind=LEARN if jobs == LEARN else None)
    return {"jobs": len(done), "failed": sum(j.state == "failed" for j in done), "seconds": round(time.perf_counter() - t0, 2)}


def stream(
    config: Config, llm: CountingLLM, pairs: list[tuple[QAItem | None, QAItem]], jobs: str, again: bool, label: str
) -> dict[str, Any]:
    """Each (before, later) in order on one writable copy: before (when there is one) -> queue -> later -> queue."""
    rows, firsts, queue = [], [], []
    with EnrichRAG(config, llm=llm, reconcile=False) as session:
        for before, later in tqdm(pairs, desc=label, unit="pair"):
            if before is not None:
                firsts.append(_ask(session, llm, before, "background"))
                queue.append(_run_queue(session, jobs))
            rows.append(_ask(session, llm, later, "background") | {"after": before.id if before else None})
            queue.append(_run_queue(session, jobs))
        asked = [before for before, _ in pairs if before is not None]
        seconds = [_ask(session, llm, before, "never") for before in tqdm(asked, desc=f"{label}: asked again", unit="q")] if again else []
        learned = len(session.graph.learned())
    return {"later": rows, "first": firsts, "again": seconds, "queue": queue, "learned_facts": learned}


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    return round(statistics.mean(r[key] for r in rows), 4) if rows else 0.0


def _paired(a: list[dict[str, Any]], b: list[dict[str, Any]], key: str) -> dict[str, Any]:
    diff = paired_difference([r[key] for r in a], [r[key] for r in b])
    return {"value": round(diff.value, 4), "ci": diff.to_list()}


def _gain_loss(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, int]:
    return {"gained": sum(x["em"] > y["em"] for x, y in zip(a, b)), "lost": sum(x["em"] < y["em"] for x, y in zip(a, b))}


def shared_hops(result: dict[str, Any]) -> dict[str, int]:
    """Where a hop could be shared at all: pairs whose earlier question (first ask) and later question
    (read-only) were both read in hops, and of those, later questions that read a learned fact."""
    rows = result["rows"]
    first, later = {r["id"]: r for r in rows["first"]}, {r["id"]: r for r in rows["read_only"]}
    grown = {r["id"]: r for r in rows["grown"]}
    both = [p for p in result["pairs"] if first[p["earlier"]]["hops"] and later[p["later"]]["hops"]]
    recalled = sum(grown[p["later"]]["recalled_read"] + grown[p["later"]]["recalled_answered"] > 0 for p in both)
    return {"pairs": len(result["pairs"]), "both_in_hops": len(both), "of_those_recalled": recalled}


def measure(config: Config, pairs: list[tuple[QAItem, QAItem, str]], unrelated: list[QAItem | None], jobs: str) -> dict[str, Any]:
    """The three streams over `pairs`; `unrelated[i]` stands before pair i's later question in the control."""
    llm = CountingLLM(make_llm(config.llm))
    with EnrichRAG(config, llm=llm, reconcile=False) as session:  # warm: model, index and store loads (nothing written)
        session.ask(pairs[0][0].question, enrich="never")
        read_only = [_ask(session, llm, later, "never") for _, later, _ in tqdm(pairs, desc="read-only", unit="q")]
    with tempfile.TemporaryDirectory() as work:
        grown = stream(writable_copy(config, Path(work) / "grown"), llm, [(a, b) for a, b, _ in pairs], jobs, True, "grown")
        controls = [(u, b) for u, (_, b, _) in zip(unrelated, pairs)]
        control = stream(writable_copy(config, Path(work) / "control"), llm, controls, jobs, False, "control")
    later, ctrl = grown["later"], control["later"]
    first, again = grown["first"], grown["again"]
    return {
        "reader": model_name(config.llm),
        "jobs": jobs,
        "pairs": [{"earlier": a.id, "later": b.id, "shared": s} for a, b, s in pairs],
        "shared": dict(Counter(s for *_, s in pairs)),
        "control_before": [u.id if u else None for u in unrelated],
        "later": {
            "n": len(later),
            "em": {"read_only": _mean(read_only, "em"), "grown": _mean(later, "em"), "control": _mean(ctrl, "em")},
            "llm_calls": {
                "read_only": _mean(read_only, "llm_calls"),
                "grown": _mean(later, "llm_calls"),
                "control": _mean(ctrl, "llm_calls"),
            },
            "grown_minus_read_only": {"em": _paired(later, read_only, "em"), "llm_calls": _paired(later, read_only, "llm_calls")},
            "grown_minus_control": {"em": _paired(later, ctrl, "em"), "llm_calls": _paired(later, ctrl, "llm_calls")},
            "grown_vs_read_only_questions": _gain_loss(later, read_only),
            "grown_vs_control_questions": _gain_loss(later, ctrl),
            "recalled": {"answered": sum(r["recalled_answered"] > 0 for r in later), "read": sum(r["recalled_read"] > 0 for r in later)},
        },
        "asked_again": {
            "n": len(again),
            "em": {"first": _mean(first, "em"), "second": _mean(again, "em")},
            "llm_calls": {"first": _mean(first, "llm_calls"), "second": _mean(again, "llm_calls")},
            "seconds_p50": {
                "first": statistics.median(r["seconds"] for r in first),
                "second": statistics.median(r["seconds"] for r in again),
            },
            "second_minus_first": {"em": _paired(again, first, "em"), "llm_calls": _paired(again, first, "llm_calls")},
            "answered_from_learned": sum(r["recalled_answered"] > 0 for r in again),
        },
        "learned_facts": {"grown": grown["learned_facts"], "control": control["learned_facts"]},
        "queue": {"grown": grown["queue"], "control": control["queue"]},
        "rows": {"read_only": read_only, "grown": later, "control": ctrl, "first": first, "again": again},
    }


def dev_streams(
    params: str, overlay: str, limit: int, seed: int
) -> tuple[Config, list[tuple[QAItem, QAItem, str]], list[QAItem | None], str]:
    """A dev set's related pairs; the control's questions drawn from those in no pair."""
    config, ev = load_eval(params, overlay)
    ensure_built(config, ev)
    items = sampled_questions(ev)
    pairs = related_pairs(items, limit)
    in_pairs = {x.id for a, b, _ in pairs for x in (a, b)}
    unrelated: list[QAItem | None] = list(random.Random(seed).sample([i for i in items if i.id not in in_pairs], len(pairs)))
    return config, pairs, unrelated, ev.dataset


def folder_streams(params: str, folder: Path, workspace: Path) -> tuple[Config, list[tuple[QAItem, QAItem, str]], list[QAItem | None], str]:
    """A folder's questions, then its related questions (each names the line it is related to). A folder
    has no question outside its pairs, so the control asks, before each related question, the question
    of the pair before (none before the first): the stream grows by as many questions, but a related
    question's own question is asked only after it."""
    from enrich_rag.config import load_config
    from enrich_rag.stages.folder import build_folder

    config = load_config(params, build_folder(folder / "docs", workspace, params))

    def read(name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines() if line.strip()]

    first = [QAItem(f"q{i}", r["question"], tuple(r["answers"])) for i, r in enumerate(read("questions.jsonl"))]
    pairs = [
        (first[r["related_to"]], QAItem(f"r{i}", r["question"], tuple(r["answers"])), "page")
        for i, r in enumerate(read("related_questions.jsonl"))
    ]
    unrelated: list[QAItem | None] = [None, *(a for a, _, _ in pairs[:-1])]
    return config, pairs, unrelated, folder.name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", help="a dev set's configs/<dataset>.yaml")
    source.add_argument("--folder", type=Path, help="holds docs/ (the documents), questions.jsonl and related_questions.jsonl")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--pairs", type=int, default=19)
    parser.add_argument("--jobs", choices=[LEARN, "all"], default=LEARN)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--recount", action="store_true", help="only add `shared_hops` to the saved result at --out, from its rows")
    args = parser.parse_args()
    if args.recount:
        saved = json.loads(Path(args.out).read_text(encoding="utf-8"))
        saved["shared_hops"] = shared_hops(saved)
        Path(args.out).write_text(json.dumps(saved, indent=2) + "\n", encoding="utf-8")
        Console().print(saved["shared_hops"])
        return
    if not (args.config or args.folder):
        parser.error("one of --config or --folder is required (or --recount)")
    with tempfile.TemporaryDirectory() as workspace:
        if args.folder:
            config, pairs, unrelated, name = folder_streams(args.params, args.folder, Path(workspace))
        else:
            config, pairs, unrelated, name = dev_streams(args.params, args.config, args.pairs, args.seed)
        result: dict[str, Any] = {"dataset": name, "tuned": False} | measure(config, pairs, unrelated, args.jobs)
    result["shared_hops"] = shared_hops(result)
    later = result["later"]
    table = Table(title=f"later questions, {name}: {later['n']} related pairs ({result['shared']}), jobs run: {args.jobs}")
    for column in ("stream", "later EM", "reader calls", "EM vs read-only", "calls vs read-only"):
        table.add_column(column, justify="left" if column == "stream" else "right")
    rows = result["rows"]
    for label, key in (("read-only", "read_only"), ("control", "control"), ("grown", "grown")):
        em, calls = _paired(rows[key], rows["read_only"], "em"), _paired(rows[key], rows["read_only"], "llm_calls")
        mean_em, mean_calls = _mean(rows[key], "em"), _mean(rows[key], "llm_calls")
        table.add_row(
            label, f"{mean_em:.3f}", f"{mean_calls:.2f}", f"{em['value']:+.3f} {em['ci']}", f"{calls['value']:+.2f} {calls['ci']}"
        )
    Console().print(table)
    a = result["asked_again"]
    Console().print(
        f"asked again: EM {a['em']['first']:.3f} -> {a['em']['second']:.3f}, reader calls {a['llm_calls']['first']:.2f} -> "
        f"{a['llm_calls']['second']:.2f}, p50 {a['seconds_p50']['first']:.2f} s -> {a['seconds_p50']['second']:.2f} s, "
        f"{a['answered_from_learned']} of {a['n']} answered from a learned fact"
    )
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
