"""The README's find block, from the committed `bench_results/find_*.json`: where the passages that answer
rank (`python -m benchmarks find`) at this round's start and now, and the scoreboard (`python -m benchmarks
scoreboard`) at both commits, paired on the same questions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from enrich_rag.eval.stats import paired_difference

KS = ("1", "3", "5", "10", "20")


def _load(root: Path, name: str, only: frozenset[str] | None) -> dict[str, Any] | None:
    path = root / "bench_results" / name
    if not path.exists() or (only is not None and f"bench_results/{name}" not in only):
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def rank_table(start: dict[str, Any], end: dict[str, Any]) -> list[str]:
    lines = [
        "| set | passages that answer | search | @1 | @3 | @5 | @10 | @20 |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, now in end["sets"].items():
        before = start["sets"].get(name)
        what = "every gold paragraph" if now["kind"] == "dev" else "the labelled line's passage"
        rows = [("hybrid alone, now", now), ("default, round start", before), ("default, now", now)]
        for label, data in rows:
            if data is None:
                continue
            search = "hybrid" if label.startswith("hybrid") else "default"
            cells = [f"{data['searches'][search][f'all@{k}']['found']}" for k in KS]
            lines.append(f"| {name} ({now['questions']}) | {what} | {label} | " + " | ".join(cells) + " |")
    return lines


def _paired_commits(start_rows: list[dict[str, Any]], end_rows: list[dict[str, Any]], read: str) -> str:
    before = {r["id"]: r[read]["right"] for r in start_rows if read in r}
    pairs = [(float(r[read]["right"]), float(before[r["id"]])) for r in end_rows if read in r and r["id"] in before]
    if not pairs:
        return ""
    diff = paired_difference([a for a, _ in pairs], [b for _, b in pairs])
    return f"{diff.value:+.3f} [{diff.low:+.2f}, {diff.high:+.2f}]"


def scoreboard_table(start: dict[str, Any] | None, end: dict[str, Any]) -> list[str]:
    lines = [
        f"At {end['commit']}" + (f", beside the round's start ({start['commit']})" if start else "") + ":",
        "",
        "| set | n | default EM | now - start | one read (top 3) | gold read | default - one read | default - gold read "
        "| held: default / one read | prompt tokens: start / now | p50 / max s | most calls |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in end["sets"].items():
        d, t = s["default"], s["top3"]
        before = (start or {}).get("sets", {}).get(name)
        gold = f"{s['gold']['em'][0]:.3f}" if "gold" in s else ""
        dg = s["paired"].get("default - gold", {}).get("em_difference")
        dt = s["paired"]["default - top3"]["em_difference"]
        change = _paired_commits(start["rows"][name], end["rows"][name], "default") if before and start else ""
        tokens = f"{before['default']['prompt_tokens_mean']:.0f} / " if before else ""
        lines.append(
            f"| {name} ({s['kind']}) | {s['questions']} | {d['em'][0]:.3f} [{d['em'][1]:.2f}, {d['em'][2]:.2f}] | {change} "
            f"| {t['em'][0]:.3f} | {gold} | {dt[0]:+.3f} [{dt[1]:+.2f}, {dt[2]:+.2f}] "
            + (f"| {dg[0]:+.3f} [{dg[1]:+.2f}, {dg[2]:+.2f}] " if dg else "| ")
            + f"| {d['held_answering']} / {t['held_answering']} | {tokens}{d['prompt_tokens_mean']:.0f} "
            f"| {d['seconds_p50']:.1f} / {d['seconds_max']:.1f} | {d['reader_calls_max']} |"
        )
    return lines


def find_block(root: Path, only: frozenset[str] | None = None) -> list[str]:
    start, end = _load(root, "find_start.json", only), _load(root, "find_end.json", only)
    lines: list[str] = []
    if start and end:
        lines += [
            "Where the passages that answer rank, no reader call (`python -m benchmarks find`; "
            "`bench_results/find_start.json`, `find_end.json`): questions whose answering passage (a documentation "
            "folder's labelled page and line) or every gold paragraph (dev sets, the first 100) is within the first k.",
            "",
            *rank_table(start, end),
            "",
        ]
    board_end = _load(root, "find_scoreboard_end.json", only)
    if board_end:
        board_start = _load(root, "find_scoreboard_start.json", only)
        lines += [
            "The scoreboard (`python -m benchmarks scoreboard`; `bench_results/find_scoreboard_*.json`): the default "
            "loop, one read of its own search's top 3 and the reader handed the passages that answer, on the same "
            "questions; intervals are paired 95% bootstraps; held: what was read held the passages that answer.",
            "",
            *scoreboard_table(board_start, board_end),
        ]
    return lines or ["No find benchmark is committed yet (`python -m benchmarks find --label end`)."]
