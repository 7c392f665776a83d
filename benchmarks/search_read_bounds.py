"""What bounds a documentation folder's answers: for each plain read of a `search_read` run, how often
its passages state a gold answer at all (the search's share) and how often the reader then answered
right (the reader's share), with no reader call: the run's rows and the workspace's chunks.

    python -m benchmarks.search_read_bounds --run bench_results/search_read_click.json --workspace /tmp/ws/click
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import duckdb

from enrich_rag.text import states

ROOT = Path(__file__).resolve().parents[1]


def bounds(rows: list[dict], texts: dict[str, str], method: str) -> dict[str, int]:
    """Questions whose passages state a gold answer, and of those the ones the reader answered right."""
    stated = [r for r in rows if any(states(texts.get(c, ""), g) for c in r[method]["chunk_ids"] for g in r["gold"])]
    return {
        "questions": len(rows),
        "gold_in_passages": len(stated),
        "right": sum(r[method]["right"] for r in rows),
        "right_where_gold_in_passages": sum(r[method]["right"] for r in stated),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, action="append", required=True, help="a search_read result (repeatable)")
    parser.add_argument("--workspace", type=Path, action="append", required=True, help="its built folder, in the same order")
    parser.add_argument("--out", type=Path, default=ROOT / "bench_results" / "search_read_bounds.json")
    args = parser.parse_args()
    result = {}
    for run_path, workspace in zip(args.run, args.workspace, strict=True):
        run = json.loads(run_path.read_text(encoding="utf-8"))
        chunks = workspace / "data" / "corpus" / "chunks.parquet"
        texts = dict(duckdb.connect().execute("SELECT chunk_id, title || ': ' || text FROM read_parquet(?)", [str(chunks)]).fetchall())
        plain = [m for m in run["summary"] if m.startswith("top") and "cut" not in m]
        result[run["set"]] = {"run": str(run_path), "commit": run["commit"], **{m: bounds(run["rows"], texts, m) for m in plain}}
        print(run["set"], {m: result[run["set"]][m] for m in plain})
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
