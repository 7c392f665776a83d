"""A chain's answer two ways, on the chains an evaluation run already read: its last hop's answer (the
loop's default) against one final read of the whole question over what the chain found (each hop's
answer as a cited fact line, then every hop's passages: how side-by-side hops are composed). The hops
are the run's, so the final read is all that differs; only the reader runs (one call a chain).

    python -m benchmarks chain_composition --run hotpotqa=results/hops/hotpotqa/RUN --run musique=... \
        --out bench_results/chain_composition.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from enrich_rag.agent.hops import Hop, chain_evidence
from enrich_rag.agent.sufficiency import check_sufficiency
from enrich_rag.config import load_config
from enrich_rag.eval.metrics import exact_match
from enrich_rag.eval.stats import bootstrap, paired_difference, with_ci
from enrich_rag.llm.factory import make_llm
from enrich_rag.storage.passages import read_passages

PROJECT = Path(__file__).resolve().parents[1]
METHOD = "enrichrag_no_enrich"


def chains(run: Path, method: str) -> list[dict[str, Any]]:
    """The run's answers whose plan was a chain (a later hop names an earlier answer)."""
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r["method"] == method and (r["trace"].get("plan") or {}).get("kind") == "chain"]


def composed(llm: Any, row: dict[str, Any], texts: dict[str, Any], max_new_tokens: int) -> str:
    hops = [
        Hop(h["hop"], h["question"], h["answer"], h["perplexity"] or float("inf"), h["grounded"], tuple(texts[c] for c in h["chunk_ids"]))
        for h in row["trace"]["chain"]
    ]
    return check_sufficiency(llm, row["question"], chain_evidence(hops), max_new_tokens).answer


def study(name: str, run: Path, method: str, llm: Any, params: str) -> dict[str, Any]:
    config = load_config(PROJECT / params, PROJECT / f"configs/{name}.yaml")
    texts = {p.id: p for p in read_passages(PROJECT / config.paths.chunks)}
    rows = []
    for r in tqdm(chains(PROJECT / run, method), desc=f"composing {name}", unit="chain"):
        answer = composed(llm, r, texts, config.llm.max_new_tokens)
        grounded = all(h["grounded"] for h in r["trace"]["chain"])
        rows.append({"id": r["id"], "last_hop": r["prediction"], "composed": answer, "gold": r["gold"], "grounded": grounded})
    last = [exact_match(x["last_hop"], x["gold"]) for x in rows]
    final = [exact_match(x["composed"], x["gold"]) for x in rows]
    diff = paired_difference(final, last)
    return {
        "run": str(run),
        "chains": len(rows),
        "last_hop_em": [round(sum(last) / len(last), 4), *bootstrap(last).to_list()],
        "composed_em": [round(sum(final) / len(final), 4), *bootstrap(final).to_list()],
        "composed_minus_last_hop": [round(diff.value, 4), *diff.to_list()],
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, help="dataset=results/<...>/<run> (dataset: a configs/ name)")
    parser.add_argument("--method", default=METHOD)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    llm = make_llm(load_config(PROJECT / args.params).llm)
    result = {name: study(name, Path(run), args.method, llm, args.params) for name, run in (s.split("=", 1) for s in args.run)}
    table = Table(title="a chain's answer: its last hop's, or one final read over what the chain found")
    for column in ("set", "chains", "last hop EM", "composed EM", "composed - last hop"):
        table.add_column(column, justify="left" if column == "set" else "right")
    for name, s in result.items():
        cell = lambda d: with_ci(d[0], d[1:])  # noqa: E731
        table.add_row(name, str(s["chains"]), cell(s["last_hop_em"]), cell(s["composed_em"]), cell(s["composed_minus_last_hop"]))
    Console().print(table)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
