"""Issue 67's scoreboard from the committed `search_read_*.json` files: per set, today's default beside one
read of its own search's top k (paired), the step that lost each question a plain read got, prompt tokens
against the loop this round started from, and how many right answers carry a quote stating the gold.

Each set is named with its file and what it is (`dev`, `tuned` or `held-out`); a file whose code is not
today's default says so in `note`. Writes `bench_results/search_read_summary.json` and prints a table.

    python -m benchmarks search_read_summary
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.eval.stats import paired_difference

ROOT = Path(__file__).resolve().parents[1]
DOCS_RIGHT = 0.65  # the targets
TOKEN_CUT = 0.30
QUOTED = 0.90
# name: (file, kind, documentation folder, the loop this round started from: a setting of the same file, or
# another file's mean prompt tokens on the same questions). Click's run is of 2001e52 (read first, passages
# whole: before the first read's cut), read once while it was held out.
SETS: dict[str, tuple[str, str, bool, str]] = {
    "black": ("search_read_black.json", "held-out", True, "landed"),
    "npm": ("search_read_npm_cut.json", "tuned", True, "search_read_npm.json:landed"),
    "click": ("search_read_click.json", "held-out then, at 2001e52", True, "landed"),
    "hotpotqa": ("search_read_hotpotqa.json", "dev", False, "landed"),
    "nq": ("search_read_nq.json", "tuned", False, ""),
    "musique": ("search_read_musique.json", "tuned", False, ""),
    "2wiki": ("search_read_2wiki.json", "dev", False, ""),
}


def _load(root: Path, name: str) -> dict[str, Any] | None:
    path = root / "bench_results" / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def token_change(root: Path, data: dict[str, Any], spec: str) -> dict[str, Any] | None:
    """The default's prompt tokens against the loop this round started from (`landed`), paired on the
    questions both answered: the round start's mean, the mean difference with its interval, and the ratio."""
    if not spec:
        return None
    file_name, _, setting = spec.rpartition(":")
    source = _load(root, file_name) if file_name else data
    start = {r["id"]: r[setting]["prefill_tokens"] for r in (source or {}).get("rows", []) if setting in r}
    pairs = [(r["default"]["prefill_tokens"], start[r["id"]]) for r in data["rows"] if r["id"] in start]
    if not pairs:
        return None
    ours, theirs = [a for a, _ in pairs], [b for _, b in pairs]
    diff = paired_difference(ours, theirs)
    base = sum(theirs) / len(theirs)
    return {
        "questions": len(pairs),
        "round_start_mean": round(base, 1),
        "difference": [round(diff.value, 1), *(round(x, 1) for x in diff.to_list())],
        "ratio": round(sum(ours) / sum(theirs) - 1, 3),
        "ratio_interval": [round(x / base, 3) for x in diff.to_list()],
    }


def set_row(root: Path, name: str, file_name: str, kind: str, docs: bool, start_spec: str) -> dict[str, Any]:
    data = _load(root, file_name)
    if data is None:
        return {"set": name, "file": file_name, "kind": kind, "missing": True}
    default, plain = data["summary"]["default"], {k: v for k, v in data["summary"].items() if k.startswith("top") and "cut" not in k}
    paired = {k.split(" - ")[1]: v for k, v in data["paired"].items() if k.startswith("default - top")}
    quoted = data.get("quote_vs_sure_default", {}).get("right_with_quote_stating_gold", [0, 0])
    change = token_change(root, data, start_spec)
    tokens = default["prefill_tokens_mean"]
    row = {
        "set": name,
        "file": file_name,
        "commit": data["commit"],
        "kind": kind,
        "documentation": docs,
        "questions": data["questions"],
        "default_right": default["right"],
        "default_em": default["em"],
        "plain_right": {k: v["right"] for k, v in plain.items()},
        "default_minus_plain": {k: {"em": p["em_difference"], "won": p["won"], "lost": p["lost"]} for k, p in paired.items()},
        "lost_at": data["lost_at"].get("default", {}),
        "reader_calls_mean": default["reader_calls_mean"],
        "prompt_tokens_mean": tokens,
        "plain_prompt_tokens_mean": {k: v["prefill_tokens_mean"] for k, v in plain.items()},
        "tokens_against_round_start": change,
        "tokens_change": None if change is None else change["ratio"],
        "seconds_p50": default["seconds_p50"],
        "right_quoted": quoted,
    }
    targets = {
        "at_least_each_plain_read": all(default["right"] >= r for r in row["plain_right"].values()),
        "quote_states_gold_on_right": quoted[1] > 0 and quoted[0] / quoted[1] >= QUOTED,
    }
    if docs:
        targets["right_at_least_0.65"] = default["right"] / data["questions"] >= DOCS_RIGHT
        targets["tokens_minus_30pct"] = row["tokens_change"] is not None and row["tokens_change"] <= -TOKEN_CUT
        targets["p50_at_most_5s"] = default["seconds_p50"] <= 5.0
    return row | {"targets": targets}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench_results" / "search_read_summary.json")
    args = parser.parse_args()
    rows = [set_row(ROOT, name, *spec) for name, spec in SETS.items()]
    args.out.write_text(json.dumps({"sets": rows}, indent=2) + "\n", encoding="utf-8")
    table = Table(title="the default beside one read of its own search")
    for column in ("set", "kind", "default", "top2/3/5", "lost at (vs top3)", "tokens (start)", "calls", "quoted right"):
        table.add_column(column)
    for r in rows:
        if r.get("missing"):
            table.add_row(r["set"], r["kind"], "missing: " + r["file"], "", "", "", "", "")
            continue
        lost = ", ".join(f"{k} {v}" for k, v in r["lost_at"].get("top3", {}).items() if v)
        change = r["tokens_against_round_start"]
        start = change and change["round_start_mean"]
        table.add_row(
            r["set"], r["kind"], f"{r['default_right']}/{r['questions']}", "/".join(str(v) for v in r["plain_right"].values()),
            lost or "-", f"{r['prompt_tokens_mean']:.0f}" + (f" ({start:.0f})" if start else ""), f"{r['reader_calls_mean']:.2f}",
            f"{r['right_quoted'][0]}/{r['right_quoted'][1]}",
        )  # fmt: skip
    Console(width=160).print(table)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
