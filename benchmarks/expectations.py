"""What a user should expect, from committed files alone: the README's table and the results page's
headline. Time and memory come from the what-to-expect benchmark (`scripts/what_to_expect.py`: 100
documents built, served warm, asked through the stream); answer quality from the scoreboard that stands
for today's default (`BOARD`): every set at one package state, the default beside one read of its own
search and the reader handed the passages that answer, paired on the same questions.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.cells import signed_interval
from enrich_rag.eval.stats import with_ci

BENCH = "bench_results/what_to_expect.json"
# The scoreboard of today's default (`python -m benchmarks scoreboard`): a new board at a new default is named here.
BOARD = "bench_results/find_scoreboard_round_end.json"
SET_NAMES = {"hotpotqa": "HotpotQA", "2wiki": "2WikiMultihopQA", "musique": "MuSiQue", "nq": "NQ-Open"}


def _mb(value: float) -> str:
    return f"{value / 1024:.1f} GB" if value >= 1024 else f"{value:.0f} MB"


def cost_rows(root: Path, only: frozenset[str] | None) -> list[str]:
    """Build time, seconds per question and memory, as the benchmark measured them."""
    path = root / BENCH
    if not path.is_file() or (only is not None and BENCH not in only):
        return []
    b = json.loads(path.read_text(encoding="utf-8"))
    plain, enriching = b["without_enrichment"], b["enrichment_allowed"]
    reads = (
        f"; {plain['llm_calls_mean']:.1f} reader calls, {plain['prefill_tokens_mean']:.0f} prompt tokens computed, "
        f"{plain['generated_tokens_mean']:.0f} generated"
        if all(f"{k}_mean" in plain for k in ("llm_calls", "prefill_tokens", "generated_tokens"))
        else ""
    )
    grew = f"{enriching['enriched_share']:.0%} of them enriched"
    if enriching.get("queued_share"):  # rounds queued behind the answer instead of waited for
        grew = f"{enriching['queued_share']:.0%} of them queued a round, run after the answer"
    return [
        f"Measured by `scripts/what_to_expect.py` (`{BENCH}`, commit {b['commit']}, {b['cores']} CPU cores, default reader):",
        "",
        "| what | measured |",
        "|---|---|",
        f"| build {b['documents']} documents (`enrich-rag build`) | {b['build']['seconds']:.0f} s, peak {_mb(b['build']['peak_rss_mb'])} |",
        f"| server start, indexes and reader loaded (`enrich-rag serve`) | {b['server_warm_s']:.0f} s |",
        f"| a question, no enrichment: first step shown / whole answer (p50 of {plain['questions']}) | "
        f"{plain['first_step_p50_s']:.1f} s / {plain['total_p50_s']:.1f} s (p95 {plain['total_p95_s']:.1f} s){reads} |",
        f"| a question, enrichment allowed: whole answer (p50 of {enriching['questions']}) | {enriching['total_p50_s']:.1f} s; {grew} |",
        f"| server memory (peak, after the questions) | {_mb(b['server_peak_rss_mb'])} |",
        "",
    ]


def quality_rows(root: Path, only: frozenset[str] | None) -> list[str]:
    """Per set of `BOARD`: the default's EM beside its own one read and the gold read, paired."""
    path = root / BOARD
    if not path.is_file() or (only is not None and BOARD not in only):
        return []
    board = json.loads(path.read_text(encoding="utf-8"))
    commits = sorted({s.get("commit", board["commit"]) for s in board["sets"].values()})
    lines = [
        f"Exact match on each set (`{BOARD}`, commit {', '.join(commits)}; `python -m benchmarks scoreboard`): "
        "today's default loop beside one read of its own search's top 3 and the same reader handed the passages "
        "that answer (the gold read), on the same questions; 95% intervals, the differences paired. The dev sets' "
        "questions (the first 100 of each) and the documentation folders' were used to choose the default's "
        "settings, so these figures are tuned. Seconds from a run that had the machine's 2 cores to itself.",
        "",
        "| set | questions | default EM | one read (top 3) | gold read | default - one read | default - gold read "
        "| prompt tokens | p50 / max s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in board["sets"].items():
        if "top3" not in s or "gold" not in s:  # an arm of the default alone
            continue
        d, paired = s["default"], s["paired"]
        cells = [
            f"{SET_NAMES.get(name, f'{name} (docs)')}",
            str(s["questions"]),
            with_ci(d["em"][0], d["em"][1:]),
            f"{s['top3']['em'][0]:.3f}",
            f"{s['gold']['em'][0]:.3f}",
            *(signed_interval(paired[key]["em_difference"]) for key in ("default - top3", "default - gold")),
            f"{d['prompt_tokens_mean']:.0f}",
            f"{d['seconds_p50']:.1f} / {d['seconds_max']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def what_to_expect(root: Path, only: frozenset[str] | None) -> list[str]:
    return cost_rows(root, only) + quality_rows(root, only)


def readme_with(readme: str, block: list[str], name: str = "what-to-expect") -> str:
    """The README with one generated block replaced (between its two markers, `<!-- NAME: start -->` and end)."""
    opening, closing = f"<!-- {name}: start -->", f"<!-- {name}: end -->"
    start, end = readme.index(opening), readme.index(closing)
    return readme[: start + len(opening)] + "\n" + "\n".join(block).rstrip() + "\n" + readme[end:]
