"""The README's find block, from the committed `bench_results/find_*.json`: where the passages that answer
rank (`python -m benchmarks find`) at this round's start and now, the scoreboard (`python -m benchmarks
scoreboard`) at both commits, paired on the same questions, and each lever measured alone (its off arm at
the commit before it, its on arm at the commit that has it, on the sets it changes)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.cells import signed_interval
from benchmarks.find import within
from enrich_rag.eval.stats import paired_difference

KS = ("1", "3", "5", "10", "20")


@dataclass(frozen=True)
class Lever:
    """One change measured alone: the search's ranks and the scoreboard without it and with it."""

    name: str
    board_off: tuple[str, ...]  # an arm's sets may come from several runs: each set from the last file that has it
    board_on: tuple[str, ...]
    find_off: str = ""  # the search's ranks off and on ("": a lever of the read alone, the search unchanged)
    find_on: str = ""


# Each set's first board this round, a later file's set over an earlier's: the default of its day at 100
# questions where one ran (HotpotQA and Click first at 4a2cb5b; NQ first as the follow lever's off arm)
FIRST_BOARDS = (
    "find_scoreboard_lever_follow_off.json",
    "find_scoreboard_every_set.json",
    "find_scoreboard_lever_markup_off.json",
    "find_scoreboard_start.json",
    "find_scoreboard_end.json",
)

# The scoreboards: the package as it is (`round_end`, every set at one state), then the states before it:
# the first read of one passage on titled passages (`first_one_state`), before it (`now`) and before the
# first read's lever (`one_state`); each board's sets may span sessions, each stamped with its state. Then
# earlier boards: every set, the round's first end, and the markup lever's off arm, which is the kept
# default on the markdown folders (the lever measured on them alone, not kept).
NOW_BOARDS = (
    "find_scoreboard_round_end.json",
    "find_scoreboard_first_one_state.json",
    "find_scoreboard_now.json",
    "find_scoreboard_one_state.json",
    "find_scoreboard_every_set.json",
    "find_scoreboard_end.json",
    "find_scoreboard_lever_markup_off.json",
)

LEVERS = (
    Lever(
        "markdown's markup read as text",
        ("find_scoreboard_lever_markup_off.json",),
        ("find_scoreboard_lever_markup.json",),
        "find_lever_markup_off.json",
        "find_lever_markup.json",
    ),
    Lever(
        "the pages the first passage names, read right after it (`retrieval.follow_first_passages`)",
        # Its off arm: the package as it is, every set, and the default alone run beside the on arm (HotpotQA, NQ).
        ("find_scoreboard_every_set.json", "find_scoreboard_lever_follow_off.json"),
        ("find_scoreboard_lever_follow.json",),
        "find_lever_follow_off.json",
        "find_lever_follow.json",
    ),
    Lever(
        "documentation's hybrid weighing BM25 more (`retrieval.dense_weight_pages` 0.6 -> 0.4)",
        ("find_scoreboard_lever_bm25_off.json",),
        ("find_scoreboard_lever_bm25.json",),
        "find_lever_bm25_off.json",
        "find_lever_bm25.json",
    ),
    Lever(
        "documentation's first read of the search's first passage alone (`agent.first_read` 3 -> 1)",
        # Off: the package before it (documentation, HotpotQA); NQ, 2Wiki and MuSiQue, which read `first_read`
        # only as a flag, from the last boards that ran them. On: the package as it is, the folders from the
        # lever's own arm.
        ("find_scoreboard_every_set.json", "find_scoreboard_lever_follow_off.json", "find_scoreboard_one_state.json"),
        ("find_scoreboard_now.json", "find_scoreboard_lever_first_read_1.json"),
    ),
    Lever(
        "the pages the first passage names, read right after it, at one package state (`retrieval.follow_first_passages` 0 -> 1)",
        # Off: the package as it was (`now`); on: the same package with this one setting changed (the
        # titled sets it changes; documentation reads `follow_first_pages`).
        ("find_scoreboard_now.json",),
        ("find_scoreboard_follow_every_set.json",),
    ),
    Lever(
        "the search's first passage read alone first on titled passages too, at one package state "
        "(`agent.first_read_passages` 5 -> 1, then folded into `agent.first_read`)",
        # Off: the package at follow_first_passages 1; on: the same package with this one loop setting as the
        # arm's (`scoreboard --agent first_read_passages=1`). Documentation read `first_read` alone: no arm.
        ("find_scoreboard_follow_every_set.json",),
        ("find_scoreboard_first_one_every_set.json", "find_scoreboard_nq_first_one.json"),
    ),
    Lever(
        "the search's first two passages in the first read (`agent.first_read` 1 -> 2), HotpotQA only: not kept",
        # Off: the package as it was (HotpotQA at its state); on: the same package, the setting as the arm's.
        ("find_scoreboard_first_one_state.json",),
        ("find_scoreboard_first_two_arm.json",),
    ),
    Lever(
        "the pages the first passage names, read with it in the first read, comparisons too (`agent.first_read_named` 0 -> 1): "
        "stopped after 2Wiki, not kept",
        # Off: the package before it (2Wiki at the first read's arm, the same loop; HotpotQA, last, at its
        # state); on: the setting as the arm's, on the working tree that was then committed as the setting's
        # code (`scoreboard --agent first_read_named=1`).
        ("find_scoreboard_first_one_every_set.json", "find_scoreboard_first_one_state.json"),
        ("find_scoreboard_first_named_arm.json",),
    ),
    Lever(
        "the pages the first passage names, read with it in the first read, but for a comparison (`agent.first_read_named` 0 -> 1)",
        # Off: as above, NQ and MuSiQue too; on: the setting as the arm's, at the package that then made it the
        # default. Documentation follows no named page (`follow_first_pages` 0): no arm.
        ("find_scoreboard_first_one_every_set.json", "find_scoreboard_nq_first_one.json", "find_scoreboard_first_one_state.json"),
        ("find_scoreboard_first_named_arm2.json",),
    ),
)


def _load(root: Path, name: str, only: frozenset[str] | None) -> dict[str, Any] | None:
    path = root / "bench_results" / name
    if not name or not path.exists() or (only is not None and f"bench_results/{name}" not in only):
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _boards(root: Path, names: tuple[str, ...], only: frozenset[str] | None) -> dict[str, Any] | None:
    """Scoreboard files read as one: each set (with its commit) from the last file that has it."""
    loaded = [board for name in names if (board := _load(root, name, only))]
    if not loaded:
        return None
    sets = {name: data | {"commit": data.get("commit", board["commit"])} for board in loaded for name, data in board["sets"].items()}
    rows = {name: board["rows"][name] for board in loaded for name in board["sets"]}
    return {"commit": " + ".join(dict.fromkeys(board["commit"] for board in loaded)), "sets": sets, "rows": rows}


def rank_table(start: dict[str, Any], end: dict[str, Any]) -> list[str]:
    lines = [
        "| set | passages that answer | search | @1 | @3 | @5 | @10 | @20 |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, now in end["sets"].items():
        before = start["sets"].get(name)
        what = "every gold paragraph" if now["kind"] == "dev" else "the labelled line's passage"
        at = f" ({now['commit']})" if "commit" in now else ""
        rows = [(f"hybrid alone, now{at}", now), ("default, round start", before), (f"default, now{at}", now)]
        for label, data in rows:
            if data is None:
                continue
            search = "hybrid" if label.startswith("hybrid") else "default"
            cells = [f"{data['searches'][search][f'all@{k}']['found']}" for k in KS]
            lines.append(f"| {name} ({now['questions']}) | {what} | {label} | " + " | ".join(cells) + " |")
    return lines


def lever_table(
    lever: Lever, boards: tuple[dict[str, Any], dict[str, Any]], ranks: tuple[dict[str, Any], dict[str, Any]] | None
) -> list[str]:
    """Per set the lever's off arm measured: EM of the default and of one read (on minus off, paired),
    prompt tokens, p50 seconds, the answering passage at rank 1 and within 3 (default search), and the
    answers the time bound ended: on a slower machine it ends more, so an arm's answers move with its pace."""
    off, on = boards
    lines = [
        f"{lever.name} (off: {off['commit']}, on: {on['commit']}; `{'`, `'.join(lever.board_off + lever.board_on)}`):",
        "",
        "| set | n | default EM off / on | on - off | one read EM off / on | on - off | prompt tokens default, one read: off / on "
        "| p50 s off / on | answering passage @1, @3: off / on | default held every one: off / on "
        "| ended by the time bound: off / on | commit off / on |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, before in off["sets"].items():
        after = on["sets"].get(name)
        if after is None:
            continue
        cells = [f"{name} ({before['kind']})", str(before["questions"])]
        for read in ("default", "top3"):  # an arm may have read the default alone
            ems = [f"{arm[read]['em'][0]:.3f}" if read in arm else "-" for arm in (before, after)]
            cells += [" / ".join(ems), _paired_commits(off["rows"][name], on["rows"][name], read)]
        tokens = [f"{arm[r]['prompt_tokens_mean']:.0f}" if r in arm else "-" for arm in (before, after) for r in ("default", "top3")]
        cells += [
            f"{tokens[0]}, {tokens[1]} / {tokens[2]}, {tokens[3]}",
            f"{before['default']['seconds_p50']:.1f} / {after['default']['seconds_p50']:.1f}"
            + same_prompt_pace(off["rows"][name], on["rows"][name]),
        ]
        found = [
            f"{arm['sets'][name]['searches']['default'][f'all@{k}']['found']}"
            for arm in ranks or ()
            if name in arm["sets"]
            for k in ("1", "3")
        ]
        cells.append(f"{found[0]}, {found[1]} / {found[2]}, {found[3]}" if len(found) == 4 else "")
        cells.append(f"{before['default']['held_answering']} / {after['default']['held_answering']}")
        cells.append(" / ".join(str(bound_ended(arm["rows"][name])) for arm in (off, on)))
        cells.append(f"{before['commit']} / {after['commit']}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def bound_ended(rows: list[dict[str, Any]]) -> int:
    """Default answers whose reading the answer's time bound (`agent.max_answer_s`) ended."""
    return sum(bool(r["default"].get("spent")) and "s spent" in r["default"]["spent"] for r in rows if "default" in r)


def same_prompt_pace(off_rows: list[dict[str, Any]], on_rows: list[dict[str, Any]]) -> str:
    """The median of on / off seconds over the questions both arms read with one reader call over the same
    passages and prompt tokens: where it is far from 1 the arms ran at different paces (another machine, or
    a job beside one), and their seconds do not compare."""
    before = {r["id"]: r["default"] for r in off_rows if "default" in r}
    ratios = sorted(
        read["seconds"] / was["seconds"]
        for r in on_rows
        if "default" in r and (was := before.get(r["id"]))
        for read in [r["default"]]
        if read["reader_calls"] == was["reader_calls"] == 1
        and read.get("read_chunk_ids") == was.get("read_chunk_ids")
        and read["prefill_tokens"] == was["prefill_tokens"]
        and was["seconds"] > 0
    )
    return f" (same prompt: x{ratios[len(ratios) // 2]:.2f}, {len(ratios)} q)" if ratios else ""


def lever_ranks_table(lever: Lever, ranks: tuple[dict[str, Any], dict[str, Any]]) -> list[str]:
    """Per set the lever changes, the default search's passages that answer within k, off / on, with on
    minus off paired on the same questions and the questions won and lost: a lever's first look, no reader call."""
    off, on = ranks
    lines = [
        f"{lever.name}, the search alone (off: {off['commit']}, on: {on['commit']}; `{lever.find_off}`, `{lever.find_on}`):",
        "",
        "Questions with every passage that answers within k: off / on (on - off [95%], won / lost).",
        "",
        "| set | n | " + " | ".join(f"@{k}" for k in KS[1:]) + " |",
        "|---|---:|" + "---:|" * len(KS[1:]),
    ]
    for name, before in off["sets"].items():
        if name not in on["sets"]:
            continue
        by_id = {r["id"]: r["default"]["all"] for r in off["rows"][name]}
        pairs = [(r["default"]["all"], by_id[r["id"]]) for r in on["rows"][name] if r["id"] in by_id]
        cells = []
        for k in KS[1:]:
            now, was = [within(a, int(k)) for a, _ in pairs], [within(b, int(k)) for _, b in pairs]
            diff = paired_difference(now, was)
            won, lost = sum(a > b for a, b in zip(now, was)), sum(a < b for a, b in zip(now, was))
            cells.append(f"{int(sum(was))} / {int(sum(now))} ({diff.value:+.2f} [{diff.low:+.2f}, {diff.high:+.2f}], +{won}/-{lost})")
        lines.append(f"| {name} ({before['kind']}) | {len(pairs)} | " + " | ".join(cells) + " |")
    return lines


def _paired_commits(start_rows: list[dict[str, Any]], end_rows: list[dict[str, Any]], read: str) -> str:
    before = {r["id"]: r[read]["right"] for r in start_rows if read in r}
    pairs = [(float(r[read]["right"]), float(before[r["id"]])) for r in end_rows if read in r and r["id"] in before]
    if not pairs:
        return ""
    diff = paired_difference([a for a, _ in pairs], [b for _, b in pairs])
    return signed_interval((diff.value, diff.low, diff.high))


def states(board: dict[str, Any]) -> list[str]:
    """The package states a scoreboard's sets were measured at: one, or it judged more than one default."""
    return sorted({s.get("package", "unrecorded") for s in board["sets"].values()})


def scoreboard_table(start: dict[str, Any] | None, end: dict[str, Any]) -> list[str]:
    lines = [
        f"At {', '.join(sorted({s.get('commit', end['commit']) for s in end['sets'].values()}))}"
        + f" (package state{'s' if len(states(end)) > 1 else ''} {', '.join(states(end))})"
        + (", beside each set's first board this round (now - first: paired on the questions both ran)" if start else "")
        + ":",
        "",
        "| set | n | default EM | now - first (its commit) | one read (top 3) | gold read | default - one read | default - gold read "
        "| held: default / one read | prompt tokens: first / now | p50 / max s | most calls |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in end["sets"].items():
        d, t = s["default"], s.get("top3")
        if t is None:  # an arm of the default alone (a lever's or a setting's): its own table pairs it
            continue
        before = (start or {}).get("sets", {}).get(name)
        gold = f"{s['gold']['em'][0]:.3f}" if "gold" in s else ""
        dg = s["paired"].get("default - gold", {}).get("em_difference")
        dt = s["paired"]["default - top3"]["em_difference"]
        change = f"{_paired_commits(start['rows'][name], end['rows'][name], 'default')} ({before['commit']})" if before and start else ""
        tokens = f"{before['default']['prompt_tokens_mean']:.0f} / " if before else ""
        lines.append(
            f"| {name} ({s['kind']}) | {s['questions']} | {d['em'][0]:.3f} [{d['em'][1]:.2f}, {d['em'][2]:.2f}] | {change} "
            f"| {t['em'][0]:.3f} | {gold} | {signed_interval(dt)} "
            + (f"| {signed_interval(dg)} " if dg else "| ")
            + f"| {d['held_answering']} / {t['held_answering']} | {tokens}{d['prompt_tokens_mean']:.0f} "
            f"| {d['seconds_p50']:.1f} / {d['seconds_max']:.1f} | {d['reader_calls_max']} |"
        )
    return lines


def held_split(board: dict[str, Any]) -> list[str]:
    """Per set, the default's answers split by whether what it read held every passage that answers, beside
    the gold read on the same questions: a loss where it held them is the reader's, a loss where it did
    not is the search's (and a question that ended after one reader call never searched again)."""
    lines = [
        "| set | n | held: questions | held: default / gold read right | not held: questions "
        "| not held: default / gold read right | not held: ended after one reader call |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows in board["rows"].items():
        both = [r for r in rows if "default" in r and "gold" in r]
        if not both:
            continue
        cells = []
        for held in (True, False):
            part = [r for r in both if r["default"]["held_answering"] == held]
            cells += [str(len(part)), f"{sum(r['default']['right'] for r in part)} / {sum(r['gold']['right'] for r in part)}"]
        cells.append(str(sum(not r["default"]["held_answering"] and r["default"]["reader_calls"] == 1 for r in both)))
        lines.append(f"| {name} | {len(both)} | " + " | ".join(cells) + " |")
    return lines


def find_block(root: Path, only: frozenset[str] | None = None) -> list[str]:
    # the held-out folder was searched at find_end.json's commit and never again: the newer file has the rest
    start, end = _load(root, "find_start.json", only), _boards(root, ("find_end.json", "find_round_end.json"), only)
    lines: list[str] = []
    if start and end:
        lines += [
            "Where the passages that answer rank, no reader call (`python -m benchmarks find`; "
            "`bench_results/find_start.json`, `find_end.json`, `find_round_end.json`; "
            "each set at the commit beside it): questions whose answering passage (a documentation "
            "folder's labelled page and line) or every gold paragraph (dev sets, the first 100) is within the first k.",
            "",
            *rank_table(start, end),
            "",
        ]
    now = [(board, name) for name in NOW_BOARDS if (board := _load(root, name, only))]
    if now:
        board_start = _boards(root, FIRST_BOARDS, only)
        lines += [
            "The scoreboard (`python -m benchmarks scoreboard`; `bench_results/find_scoreboard_*.json`): the default "
            "loop, one read of its own search's top 3 and the reader handed the passages that answer, on the same "
            "questions; intervals are paired 95% bootstraps; held: what was read held the passages that answer.",
        ]
        for board, name in now:
            lines += ["", f"`{name}`:", "", *scoreboard_table(board_start, board)]
        board, name = now[0]
        lines += [
            "",
            f"Where the default's misses are (`{name}`): what it read held every passage that answers, or not, "
            "beside the gold read on the same questions.",
            "",
            *held_split(board),
        ]
    levers: list[str] = []
    for lever in LEVERS:
        boards = _boards(root, lever.board_off, only), _boards(root, lever.board_on, only)
        ranks = _load(root, lever.find_off, only), _load(root, lever.find_on, only)
        if boards[0] and boards[1]:
            levers += ["", *lever_table(lever, (boards[0], boards[1]), (ranks[0], ranks[1]) if ranks[0] and ranks[1] else None)]
        if ranks[0] and ranks[1] and any(s["kind"] == "dev" for s in ranks[0]["sets"].values()):  # every gold paragraph, off beside on
            levers += ["", *lever_ranks_table(lever, (ranks[0], ranks[1]))]
    if levers:
        lines += ["", "Each lever alone, on the sets it changes (on minus off paired on the same questions):", *levers]
    return lines or ["No find benchmark is committed yet (`python -m benchmarks find --label end`)."]
