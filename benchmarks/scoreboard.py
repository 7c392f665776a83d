"""One scoreboard, one commit, every set: the default loop beside one read of its own search's top 3 and
the reader handed the passages that answer, paired on the same questions, read-only. Each set carries its
commit and package state (`find.package_state`): sets run in different sessions count as one scoreboard
only where that state is the same.

Per documentation folder (every question; the answering passage is the page's chunk that holds the
labelled line) and per dev set (the first `--limit` questions with gold paragraphs): EM with its
interval, the default minus each plain read (paired), how often what each read held every passage that
answers, prompt tokens a question, seconds p50 and max, and the most reader calls. The seconds are
only worth reading from a run that had the machine to itself. `gold_top3`, asked for by name, is a perfect
search's one read: the passages that answer first, then the search's best others to 3. Beside `top3` and
`gold` it tells what the search's misses cost from what the reader loses to passages it does not need.

    python -m benchmarks scoreboard --label end --limit 30
    python -m benchmarks scoreboard --label end --sets structlog      # the held-out folder, once
    python -m benchmarks scoreboard --label bound_off --sets musique --reads default --agent max_answer_s=3600
    python -m benchmarks scoreboard --label reader_bound --sets hotpotqa musique --reads top3 gold gold_top3
    python -m benchmarks scoreboard --label one_state --reuse reader_bound   # its top3 and gold reads, same state
    # -> table + bench_results/find_scoreboard_<label>.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.cells import signed_interval
from benchmarks.find import evidence_rank, measured_sets, package_state
from benchmarks.search_read import _tokens, loop_read, paired, plain_read
from enrich_rag.agent.sufficiency import check_sufficiency
from enrich_rag.api import EnrichRAG
from enrich_rag.eval.metrics import exact_match
from enrich_rag.eval.stats import bootstrap
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge

ROOT = Path(__file__).resolve().parents[1]
READS = ("default", "top3", "gold", "gold_top3")
DEFAULT_READS = READS[:3]
PAIRS = (("default", "top3"), ("default", "gold"), ("top3", "gold_top3"), ("gold_top3", "gold"))


def answering(rag: EnrichRAG, q: dict[str, Any]) -> list[Passage]:
    """The passages that answer: every gold paragraph (dev), or the page's chunk holding the labelled line."""
    if "gold" in q:
        return rag.resources.passages.by_doc_ids(q["gold"])
    page = rag.resources.passages.by_doc_ids([q["source"]])
    rank = evidence_rank(page, q["source"], q["evidence"])
    return [page[rank - 1]] if rank else []


def given_read(rag: EnrichRAG, question: str, passages: list[Passage]) -> dict[str, Any]:
    """One reader call over these passages, whole, with the loop's answer prompt."""
    before, start = _tokens(rag).copy(), time.perf_counter()
    read = check_sufficiency(rag.resources.llm, question, list[Passage | Edge](passages), rag.config.llm.max_new_tokens)
    return {
        "answer": read.answer,
        "seconds": round(time.perf_counter() - start, 3),
        "reader_calls": 1,
        "chunk_ids": [p.id for p in passages],
        **_tokens(rag).since(before),
    }


def perfect_top(rag: EnrichRAG, question: str, gold: list[Passage], k: int = 3) -> list[Passage]:
    """What a perfect search would hand one read of k: the passages that answer first, then the search's
    best others (all of the gold when it alone is more than k)."""
    kept = {p.id for p in gold}
    others = [p for p in rag.search(question, k + len(gold)) if p.id not in kept]
    return [*gold, *others][: max(k, len(gold))]


def held(rag: EnrichRAG, read_ids: list[str], gold: list[Passage], q: dict[str, Any]) -> bool:
    """What a read was handed holds every passage that answers (dev: a chunk of every gold paragraph)."""
    if "gold" in q:
        return set(q["gold"]) <= {p.doc_id for p in rag.resources.passages.by_ids(read_ids)}
    return bool(gold) and gold[0].id in read_ids


def reusable(path: Path, state: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Per set, the rows of an earlier scoreboard measured at this package state: the same default, so a
    read made there need not be made again (a row keeps where it came from). Uncommitted edits reuse nothing."""
    if not path.exists():
        raise SystemExit(f"error: --reuse: no {path.name} in bench_results/")
    earlier = json.loads(path.read_text(encoding="utf-8"))
    if state.endswith("+changed"):
        return {}
    return {
        name: {row["id"]: row for row in earlier["rows"][name]}
        for name, measured in earlier["sets"].items()
        if measured.get("package") == state
    }


def run_set(
    rag: EnrichRAG,
    questions: list[dict[str, Any]],
    name: str,
    reads: tuple[str, ...] = READS,
    agent: dict[str, Any] | None = None,
    reuse: dict[str, dict[str, Any]] | None = None,
    reused_from: str = "",
) -> list[dict[str, Any]]:
    """Each question read as `reads` say (the default loop, one read of the top 3, the gold read), alone;
    `agent`: loop settings other than the project's (an arm such as the answer's bound lifted); `reuse`:
    rows by question id whose reads were made at this package state (only the project's own settings)."""
    rows = []
    for q in tqdm(questions, desc=name, unit="q"):
        gold = answering(rag, q)
        row: dict[str, Any] = {"id": q["id"], "question": q["question"], "gold_answers": q["answers"]}
        earlier = (reuse or {}).get(q["id"], {})
        for read in reads:
            if read.startswith("gold") and not gold:
                continue
            if read in earlier and not (read == "default" and agent):
                row[read] = earlier[read] | {"reused_from": reused_from}
                continue
            rag.resources.warm_prompts()  # each read meets the cache a served question meets: the prompt heads
            if read == "default":
                row[read] = loop_read(rag, q["question"], {"agent": agent or {}})
            elif read == "top3":
                row[read] = plain_read(rag, q["question"], 3)
            elif read == "gold":
                row[read] = given_read(rag, q["question"], gold)
            else:
                row[read] = given_read(rag, q["question"], perfect_top(rag, q["question"], gold))
            ids = row[read].get("read_chunk_ids") or row[read]["chunk_ids"]
            row[read]["right"] = bool(exact_match(row[read]["answer"], q["answers"]))
            row[read]["held_answering"] = held(rag, ids, gold, q)
        rows.append(row)
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows)}
    for read in READS:
        per = [r[read] for r in rows if read in r]
        if not per:
            continue
        em = bootstrap([float(p["right"]) for p in per])
        seconds = sorted(p["seconds"] for p in per)
        out[read] = {
            "em": [round(em.value, 3), *em.to_list()],
            "right": sum(p["right"] for p in per),
            "held_answering": sum(p["held_answering"] for p in per),
            "prompt_tokens_mean": round(sum(p["prefill_tokens"] for p in per) / len(per), 1),
            "seconds_p50": seconds[len(seconds) // 2],
            "seconds_max": seconds[-1],
            "reader_calls_max": max(p["reader_calls"] for p in per),
        }
    out["paired"] = {}
    for a, b in PAIRS:
        if both := [r for r in rows if a in r and b in r]:
            # lost with every answering passage in hand: the reader's share of the loss, not the search's
            held_lost = sum(r[b]["right"] and not r[a]["right"] and r[a]["held_answering"] for r in both)
            out["paired"][f"{a} - {b}"] = paired(both, a, b) | {"lost_where_held": held_lost}
    return out


def _difference(pair: dict[str, Any] | None) -> str:
    if pair is None:
        return "-"
    return signed_interval(pair["em_difference"])


def table(result: dict[str, Any]) -> Table:
    states = {s.get("package", "?") for s in result["sets"].values()}
    one = f"one package state {states.pop()}" if len(states) == 1 else f"MIXED package states {sorted(states)}: not one default"
    out = Table(title=f"scoreboard ({one}): EM, held = what was read held the passages that answer")
    pairs = [f"{a} - {b}" for a, b in PAIRS if any(f"{a} - {b}" in s["paired"] for s in result["sets"].values())]
    columns = ("set", "commit", "n", "default EM [95%]", "top3", "gold", "gold_top3", *pairs, "held d/t3", "tokens d/t3")
    for column in (*columns, "p50 / max s", "max calls"):
        out.add_column(column)
    for name, s in result["sets"].items():
        d, t = s.get("default"), s.get("top3")  # an arm may have made only some reads: "-"
        out.add_row(
            name,
            s.get("commit", result["commit"]),
            str(s["questions"]),
            f"{d['em'][0]:.3f} [{d['em'][1]:.2f}, {d['em'][2]:.2f}]" if d else "-",
            *(f"{s[read]['em'][0]:.3f}" if read in s else "-" for read in ("top3", "gold", "gold_top3")),
            *(_difference(s["paired"].get(pair)) for pair in pairs),
            "/".join(str(x["held_answering"]) if x else "-" for x in (d, t)),
            "/".join(f"{x['prompt_tokens_mean']:.0f}" if x else "-" for x in (d, t)),
            f"{d['seconds_p50']:.1f} / {d['seconds_max']:.1f}" if d else "-",
            str(d["reader_calls_max"]) if d else "-",
        )
    return out


def settings(items: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` pairs, each value read as YAML (`max_answer_s=3600` is a number)."""
    bad = [item for item in items if "=" not in item]
    if bad:
        raise SystemExit(f"error: --agent takes KEY=VALUE, got {bad[0]!r}")
    return {key: yaml.safe_load(value) for key, value in (item.split("=", 1) for item in items)}


def main(argv: list[str] | None = None) -> None:
    arms = argparse.ArgumentParser(add_help=False)
    arms.add_argument("--reads", nargs="+", choices=READS, default=list(DEFAULT_READS), help="which reads (default: the first three)")
    arms.add_argument("--agent", nargs="+", default=[], metavar="KEY=VALUE", help="loop settings for this arm, e.g. max_answer_s=3600")
    arms.add_argument("--reuse", metavar="LABEL", help="take the reads find_scoreboard_<LABEL>.json made at this package state")
    known, rest = arms.parse_known_args(argv)
    agent = settings(known.agent)
    source = ROOT / "bench_results" / f"find_scoreboard_{known.reuse}.json"
    earlier = reusable(source, package_state()) if known.reuse else {}

    def measure(rag: EnrichRAG, questions: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
        return run_set(rag, questions, name, tuple(known.reads), agent, earlier.get(name), source.name)

    result, out_path = measured_sets(
        rest, __doc__ or "", "find_scoreboard_", measure, lambda rows, kind: summarise(rows) | {"kind": kind, "agent": agent}
    )
    Console(width=220).print(table(result))
    print(f"wrote {out_path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
