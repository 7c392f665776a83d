"""What a user should expect, from committed files alone: the README's table and the results page's
headline. Time and memory come from the what-to-expect benchmark (`scripts/what_to_expect.py`: 100
documents built, served warm, asked through the stream); answer quality from the run that stands for
the default loop on each dev set (`CURRENT_RUNS`), beside the one-shot oracle (the reader handed the
gold passages) of that set's largest run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from enrich_rag.eval.stats import with_ci

BENCH = "bench_results/what_to_expect.json"
DEFAULT_METHOD = "enrichrag_no_enrich"  # the loop as a question runs it by default (enrichment is a setting)
ORACLE = "oracle"
DEV_SETS = {"hotpotqa": "HotpotQA", "2wiki": "2WikiMultihopQA", "musique": "MuSiQue", "nq": "NQ-Open"}  # the configs/ sets
# The run of today's default loop that stands for each set, and whether its questions were used to tune it
# (a rule's shape or a setting chosen on them): a new run of the default is named here.
CURRENT_RUNS = {  # dataset -> (run, whether its questions chose a setting, the method that ran the default loop)
    "hotpotqa": ("results/fast/hotpotqa/hotpotqa-dev261-300-compare-one-read", False, DEFAULT_METHOD),
    "2wiki": ("results/fast/2wiki/2wiki-dev161-200-compare-one-read", False, DEFAULT_METHOD),
    "musique": ("results/hops/musique/dev100-bridge-881e4d0", True, DEFAULT_METHOD),  # the bridge check was shaped on these parses
    "nq": ("results/hops/nq/dev100-bridge-881e4d0", True, DEFAULT_METHOD),  # earlier rounds' settings were chosen on NQ dev 1-100
}


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


def _runs(root: Path, only: frozenset[str] | None) -> list[tuple[Path, dict[str, Any]]]:
    found = sorted(p for p in root.glob("results/**/metrics.json") if only is None or p.relative_to(root).as_posix() in only)
    return [(p, json.loads(p.read_text(encoding="utf-8"))) for p in found if "workspace" not in p.parts]


def _loop(run: Path, method: str) -> str:
    """How the method's loop read a question in that run: planned hops, read first, or read as one."""
    import yaml

    from enrich_rag.eval.methods import AGENT_OVERRIDES

    config = run / "config.yaml"
    agent = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("agent", {}) if config.is_file() else {}
    agent = agent | AGENT_OVERRIDES.get(method, {})
    if not agent.get("hops", True):
        return "one read"
    return "read first" if agent.get("plan_when") == "unsure" else "hops"


def quality_rows(root: Path, only: frozenset[str] | None) -> list[str]:
    """Per dev set: the default loop's EM in the run `CURRENT_RUNS` names, and the one-shot oracle's in the
    set's largest run."""
    ceiling: dict[str, tuple[int, Path, dict[str, Any]]] = {}
    runs = dict(_runs(root, only))
    for path, metrics in runs.items():
        methods, dataset = metrics.get("methods", {}), metrics.get("dataset", "")
        if dataset in DEV_SETS and ORACLE in methods and "em_ci" in methods[ORACLE]:
            n = int(methods[ORACLE].get("n", 0))
            if dataset not in ceiling or n > ceiling[dataset][0]:
                ceiling[dataset] = (n, path, metrics)
    current = {d: root / run / "metrics.json" for d, (run, *_) in CURRENT_RUNS.items() if root / run / "metrics.json" in runs}
    if not current:
        return []
    lines = [
        "Exact match on each bundled dev set (95% interval): today's default loop beside the same reader handed the",
        "gold passages at once (the one-shot oracle, from the set's largest run; where the questions differ this is",
        "not a paired difference). `tuned`: whether these questions were used to choose a rule or a setting.",
        "",
        "| dev set | loop | tuned | EM | questions | p50 s | oracle EM | questions | runs |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for dataset, path in current.items():
        own = runs[path]["methods"][CURRENT_RUNS[dataset][2]]
        oracle_cells = ["", ""]
        files = [f"`{path.parent.relative_to(root)}`"]
        if dataset in ceiling:
            _, opath, ometrics = ceiling[dataset]
            o = ometrics["methods"][ORACLE]
            oracle_cells = [with_ci(o["em"], o.get("em_ci")), str(o.get("n", ""))]
            if opath != path:
                files.append(f"`{opath.parent.relative_to(root)}`")
        latency = own.get("latency_p50_s")
        lines.append(
            f"| {DEV_SETS[dataset]} | {_loop(path.parent, CURRENT_RUNS[dataset][2])} | {'yes' if CURRENT_RUNS[dataset][1] else 'no'} | "
            f"{with_ci(own['em'], own.get('em_ci'))} | {own.get('n', '')} | "
            f"{'' if latency is None else f'{latency:.1f}'} | {oracle_cells[0]} | {oracle_cells[1]} | {', '.join(files)} |"
        )
    return lines + [
        "",
        "p50 s is the run's median seconds per question on 2 busy cores (an evaluation runs methods side by side);",
        "the benchmark above is the quiet figure.",
        "",
    ]


def what_to_expect(root: Path, only: frozenset[str] | None) -> list[str]:
    return cost_rows(root, only) + quality_rows(root, only)


def readme_with(readme: str, block: list[str], name: str = "what-to-expect") -> str:
    """The README with one generated block replaced (between its two markers, `<!-- NAME: start -->` and end)."""
    opening, closing = f"<!-- {name}: start -->", f"<!-- {name}: end -->"
    start, end = readme.index(opening), readme.index(closing)
    return readme[: start + len(opening)] + "\n" + "\n".join(block).rstrip() + "\n" + readme[end:]
