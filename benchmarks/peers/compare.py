"""The peers side by side on one set: each system's index cost and answers, and EnrichRAG's default minus
each peer's mode, paired on the same questions (`bench_results/peers_<set>_<n>q.json`, a table printed).

Reads the runners' files (`peers_<system>_<set>_<n>q_index.json` and `_answer.json`); a system whose files
are missing is listed with what is missing, never dropped silently.

    python -m benchmarks.peers.compare --set hotpotqa --questions 30
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.peers.sets import FOLDERS, ROOT, corpus_chars, folder_path, spent_so_far
from enrich_rag.eval.stats import bootstrap, compare, paired_rows, with_ci

SYSTEMS = ("enrichrag", "lightrag", "minirag", "hipporag")
BASE = ("enrichrag", "default")
CEILING = "enrichrag:oracle"  # the reader handed the gold paragraphs: a bound to read against, not a lesson
CorpusChars = Callable[[str, int], int]  # a set's corpus size at n questions


def _load(root: Path, system: str, name: str, n: int, stage: str) -> dict[str, Any] | None:
    path = root / "bench_results" / f"peers_{system}_{name}_{n}q_{stage}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def index_cost(index: dict[str, Any]) -> dict[str, Any]:
    tokens = index["reader_tokens_all_runs"]
    return {
        "seconds": index["seconds_all_runs"],
        "cpu_seconds": index.get("cpu_seconds_all_runs"),
        "runs": index["runs"],
        "reader_calls": index["reader_calls_all_runs"],
        "reader_prompt_tokens": tokens["prefill_tokens"] + tokens["cached_tokens"],
        "reader_generated_tokens": tokens["generated_tokens"],
        "peak_rss_mb": index.get("peak_rss_mb_all_runs", index["peak_rss_mb"]),
        "bytes_on_disk": index["bytes_on_disk"],
    } | {k: index[k] for k in ("chunks", "entities", "relations", "chunks_without_entities") if k in index}


def measured_indexes(root: Path, system: str) -> list[tuple[str, int]]:
    """(set, questions) of every index the system has a file for."""
    found = []
    for path in (root / "bench_results").glob(f"peers_{system}_*q_index.json"):
        match = re.fullmatch(rf"peers_{system}_([a-z0-9]+)_(\d+)q_index\.json", path.name)
        if match:
            found.append((match[1], int(match[2])))
    return found


def projected(root: Path, system: str, name: str, n: int, chars: CorpusChars) -> str | None:
    """Why a system has no index of a set's corpus, from what it measured: its seconds per corpus character
    at the largest smaller size of this set it indexed (else its largest index of another set), scaled to
    this corpus (an index's cost grows with the text it extracts from)."""
    found = [(s, size) for s, size in measured_indexes(root, system) if (s, size) != (name, n)]
    same = [(s, size) for s, size in found if s == name and size < n]
    other = [(s, size) for s, size in found if s != name]
    if not (same or other):
        return None
    at, size = max(same) if same else max(other, key=lambda found: found[1])
    index = _load(root, system, at, size, "index")
    seconds = index["index"]["seconds_all_runs"] if index else 0.0
    have, want = chars(at, size), chars(name, n)
    return (
        f"{at} {size}q ({have:,} characters) took {seconds:,.0f} s to index: {name} {n}q ({want:,} characters) "
        f"would take about {seconds / have * want / 3600:.1f} h of this machine's 2 cores"
    )


def under_way(root: Path, system: str, name: str, n: int) -> str | None:
    """An index started and not finished (runs logged, no index file): what it has spent so far."""
    spent = spent_so_far(folder_path(system, name, n, root))
    if spent is None:
        return None
    runs = f"{spent['runs']} run{'s' if spent['runs'] > 1 else ''}"
    return f"index under way: {runs}, {spent['seconds'] / 3600:.1f} h and {spent['reader_calls']:,} reader calls so far"


def with_gold_held(row: dict[str, Any]) -> dict[str, Any]:
    """The row with `gold_all` (1.0 when what it handed the reader held every gold paragraph) where it
    recorded what its context held; older rows did not, and stay without it."""
    if not row.get("gold_paragraphs"):
        return row
    return row | {"gold_all": float(len(row["gold_in_context"]) == row["gold_paragraphs"])}


def answers_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    em, f1 = bootstrap([r["em"] for r in rows]), bootstrap([r["f1"] for r in rows])
    held = [r["gold_all"] for r in rows if "gold_all" in r]
    return {
        "n": len(rows),
        "em": [round(em.value, 4), *em.to_list()],
        "f1": [round(f1.value, 4), *f1.to_list()],
        "contained": round(sum(r["contained"] for r in rows) / len(rows), 4),
        "gold_all_in_context": round(sum(held) / len(held), 4) if len(held) == len(rows) else None,
        "seconds_p50": round(statistics.median(r["seconds"] for r in rows), 2),
        "reader_calls_mean": round(statistics.fmean(r["reader_calls"] for r in rows), 2),
        "prompt_tokens_mean": round(statistics.fmean(r["tokens"].get("prefill_tokens", 0) for r in rows), 1),
        "generated_tokens_mean": round(statistics.fmean(r["tokens"].get("generated_tokens", 0) for r in rows), 1),
    }


def versus(base: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The default against a peer's mode, paired, with the questions each got right that the other missed
    (what a peer does better is read off its `peer_only`)."""
    both = list(zip(*paired_rows(base, rows), strict=True))
    won = [(mine, peer) for mine, peer in both if peer["em"] > mine["em"]]
    return compare(base, rows, ("em", "f1", "contained", "gold_all")) | {
        "default_only": [mine["id"] for mine, peer in both if mine["em"] > peer["em"]],
        "peer_only": [peer["id"] for _, peer in won],
        "peer_only_answers": [
            {"id": peer["id"], "peer": peer["answer"], "default": mine["answer"], "gold": peer["gold"]} for mine, peer in won
        ],
    }


def side_by_side(root: Path, name: str, n: int, chars: CorpusChars = corpus_chars) -> dict[str, Any]:
    systems: dict[str, Any] = {}
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for system in SYSTEMS:
        index, answered = _load(root, system, name, n, "index"), _load(root, system, name, n, "answer")
        systems[system] = {
            "index": index_cost(index["index"]) if index else None,
            "changes": list(dict.fromkeys([*(index or {}).get("changes", []), *(answered or {}).get("changes", [])])),
            "missing": [stage for stage, found in (("index", index), ("answer", answered)) if not found],
        }
        if not index and (reasons := [r for r in (under_way(root, system, name, n), projected(root, system, name, n, chars)) if r]):
            systems[system]["not_run"] = "; ".join(reasons)
        for row in (answered or {}).get("answers", []):
            rows.setdefault((system, row["mode"]), []).append(with_gold_held(row))
    summary = {f"{s}:{m}": answers_summary(r) for (s, m), r in rows.items()}
    base = rows.get(BASE, [])
    paired = {f"{BASE[0]}:{BASE[1]} - {s}:{m}": versus(base, r) for (s, m), r in rows.items() if (s, m) != BASE and base}
    own = (systems["enrichrag"]["index"] or {}).get("reader_prompt_tokens")
    for system, found in systems.items():
        cost = found["index"]
        if system != "enrichrag" and cost and own is not None:
            peer = cost["reader_prompt_tokens"] + cost["reader_generated_tokens"]
            # EnrichRAG's seed index makes no reader call: the ratio is unbounded, so the peer's tokens say it.
            found["index_tokens_over_enrichrag"] = None if own == 0 else round(peer / own, 1)
            enrich_seconds = systems["enrichrag"]["index"]["seconds"]
            found["index_seconds_over_enrichrag"] = round(cost["seconds"] / enrich_seconds, 1) if enrich_seconds else None
    return {"set": name, "questions": n, "systems": systems, "summary": summary, "paired": paired}


def _mb(value: float) -> str:
    return f"{value / 1e6:.1f}"


def table_lines(result: dict[str, Any], where: str) -> list[str]:
    """The side by side as Markdown (the results page and the README's "against peers" block)."""
    name, n = result["set"], result["questions"]
    asked = (
        f"the folder `{FOLDERS[name]}`: its first {n} questions, its every page the corpus"
        if name in FOLDERS
        else f"the first {n} dev questions and their own paragraphs"
    )
    lines = [
        f"Same reader (Qwen2.5 1.5B, llama.cpp, greedy), MiniLM, corpus and questions: {name}, {asked}. "
        f"From {where} (`python -m benchmarks.peers.compare`).",
        "",
        "| system: mode | EM | F1 | gold contained | every gold paragraph in its context | p50 s | reader calls | prompt tokens |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for key, s in result["summary"].items():
        held = s.get("gold_all_in_context")
        lines.append(
            f"| {key} | {with_ci(s['em'][0], s['em'][1:])} | {with_ci(s['f1'][0], s['f1'][1:])} | {s['contained']:.3f} | "
            f"{'' if held is None else f'{held:.3f}'} | {s['seconds_p50']:.1f} | {s['reader_calls_mean']:.2f} | "
            f"{s['prompt_tokens_mean']:.0f} |"
        )
    lines += [
        "",
        "| system | index s | reader calls | prompt tokens | generated | peak MB | on disk MB | entities | relations | "
        "chunks without an entity | not run |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for system, found in result["systems"].items():
        cost = found["index"] or {}
        cells = [cost.get(k, "") for k in ("seconds", "reader_calls", "reader_prompt_tokens", "reader_generated_tokens", "peak_rss_mb")]
        extracted = [cost.get(k, "") for k in ("entities", "relations", "chunks_without_entities")]
        disk = _mb(cost["bytes_on_disk"]) if cost else ""
        missing = ", ".join(found["missing"]) + (f" ({found['not_run']})" if found.get("not_run") else "")
        row = [system, *map(str, cells), disk, *map(str, extracted), missing]
        lines.append("| " + " | ".join(row) + " |")
    paired = [
        f"- {key}: EM {with_ci(p['em'], p['em_ci'])}, F1 {with_ci(p['f1'], p['f1_ci'])}"
        + (f", gold contained {with_ci(p['contained'], p['contained_ci'])}" if "contained" in p else "")
        + (f", every gold paragraph in context {with_ci(p['gold_all'], p['gold_all_ci'])}" if "gold_all" in p else "")
        + f" (paired, {p['n']} questions; right only with the default {len(p['default_only'])}, only with the other "
        f"{len(p['peer_only'])})"
        for key, p in result["paired"].items()
        if "em" in p
    ]
    better = where_others_do_better(result)
    learn = ["", "Where another row does better than the default:", "", *better] if better else []
    return lines + ([""] + paired if paired else []) + learn + [""]


def where_others_do_better(result: dict[str, Any]) -> list[str]:
    """What the project could learn from: each row's measures that beat the default's, and the questions it
    got right that the default missed, with both answers (the oracle row is left out: it beats the default
    by construction)."""
    lines = []
    base = result["summary"].get(":".join(BASE))
    for key, s in result["summary"].items():
        if not base or key in (":".join(BASE), CEILING):
            continue
        measures = {
            "EM": (s["em"][0], base["em"][0]),
            "gold contained": (s["contained"], base["contained"]),
            "every gold paragraph in context": (s.get("gold_all_in_context"), base.get("gold_all_in_context")),
        }
        beats = [
            f"{label} {theirs:.3f} vs {ours:.3f}"
            for label, (theirs, ours) in measures.items()
            if theirs is not None and ours is not None and theirs > ours
        ]
        if beats:
            lines.append(f"- {key}: " + "; ".join(beats))
    own = result["systems"]["enrichrag"]["index"]
    for system, found in result["systems"].items():
        cost = found["index"]
        if system == "enrichrag" or not (cost and own):
            continue
        labels = {"bytes_on_disk": "index bytes on disk", "peak_rss_mb": "peak MB while indexing"}
        smaller = [f"{label} {cost[k]:,} vs {own[k]:,}" for k, label in labels.items() if cost[k] < own[k]]
        if smaller:
            lines.append(f"- {system}: " + "; ".join(smaller))
    for key, p in result["paired"].items():
        other = key.split(" - ")[1]
        if other == CEILING:
            continue
        lines += [
            f"- {other} right where the default was not ({a['id']}): {a['peer'][:80]!r}, the default {a['default'][:80]!r} "
            f"(gold {a['gold'][0]!r})"
            for a in p.get("peer_only_answers", [])
        ]
    return lines


def show(result: dict[str, Any]) -> None:
    table = Table(title=f"peers on {result['set']} ({result['questions']} questions), same reader")
    for column in ("system:mode", "EM", "F1", "p50 s", "calls", "prompt tok"):
        table.add_column(column)
    for key, s in result["summary"].items():
        table.add_row(key, with_ci(s["em"][0], s["em"][1:]), with_ci(s["f1"][0], s["f1"][1:]), str(s["seconds_p50"]),
                      str(s["reader_calls_mean"]), str(s["prompt_tokens_mean"]))  # fmt: skip
    console = Console()
    console.print(table)
    for key, p in result["paired"].items():
        if "em" in p:
            console.print(f"{key}: EM {with_ci(p['em'], p['em_ci'])}, F1 {with_ci(p['f1'], p['f1_ci'])} (n {p['n']})")
    for system, s in result["systems"].items():
        console.print(f"{system}: index {s['index']}; missing {s['missing'] or 'nothing'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="hotpotqa")
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    result = side_by_side(ROOT, args.set, args.questions)
    out = ROOT / "bench_results" / f"peers_{args.set}_{args.questions}q.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    show(result)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
