"""Examples of a generated test set, N of each type, as a table to read and a JSON beside it: what a
user checks before trusting a synthetic set to rank settings.

    python -m benchmarks testset_examples testsets/hotpotqa_bundled.jsonl --per-type 20
    # -> table + bench_results/testset_examples_<name>.json
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("testset", type=Path)
    parser.add_argument("--per-type", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    by_type: dict[str, list[dict]] = defaultdict(list)
    for line in args.testset.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        by_type[row["type"]].append(row)
    rng = random.Random(args.seed)
    picked = {kind: rng.sample(rows, min(args.per_type, len(rows))) for kind, rows in sorted(by_type.items())}
    out = Path(args.out or f"bench_results/testset_examples_{args.testset.stem}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {kind: [{k: r[k] for k in ("id", "question", "answers", "persona", "facts")} for r in rows] for kind, rows in picked.items()},
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    console = Console(width=160)
    for kind, rows in picked.items():
        table = Table(title=f"{kind}: {len(rows)} of {len(by_type[kind])}", show_lines=True)
        for column, width in (("question", 70), ("answer", 22), ("facts used (subject | relation | object)", 60)):
            table.add_column(column, max_width=width)
        for row in rows:
            facts = "\n".join(f"{f['subject']} | {f['relation']} | {f['object']}" for f in row["facts"])
            table.add_row(row["question"], row["answers"][0], facts)
        console.print(table)
    console.print(f"-> {out}")


if __name__ == "__main__":
    main()
