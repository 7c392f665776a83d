"""Where the hop loop's chains hold and where they break, read from an evaluation run against MuSiQue's
gold chains (`decomposition`): plans with the gold number of hops, hop accuracy against the gold
sub-answers, grounded chains and their EM, and for each wrong answer the first place its chain broke.

A wrong answer is put down to the first of, in order:
- plan: the plan's number of hops is not the gold chain's;
- evidence: some hop did not read its gold paragraph (hop i against gold hop i);
- misread: every hop read its gold paragraph, and some sub-answer is wrong;
- composition: every sub-answer right, the final answer wrong.
`oracle_hops` in the same run (the gold chain read over the gold paragraphs) says how far a better reader
alone would go.

    python -m benchmarks hop_chains results/musique/RUN --out bench_results/hop_chains_musique.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.config import load_config
from enrich_rag.eval.datasets import QAItem, load_questions
from enrich_rag.eval.metrics import exact_match
from enrich_rag.eval.stats import bootstrap

BREAKS = ("plan", "evidence", "misread", "composition")


def _chunk_doc(chunk_id: str) -> str:
    return chunk_id.split("::")[0]


def first_break(chain: list[dict[str, Any]], gold: QAItem) -> str:
    if len(chain) != len(gold.hops):
        return "plan"
    if any(doc not in {_chunk_doc(c) for c in hop["chunk_ids"]} for hop, (_, _, doc) in zip(chain, gold.hops)):
        return "evidence"
    if any(not exact_match(hop["answer"], [answer]) for hop, (_, answer, _) in zip(chain, gold.hops)):
        return "misread"
    return "composition"


def _rate(values: list[float]) -> list[float] | None:
    if not values:
        return None
    score = bootstrap(values)
    return [round(score.value, 4), *score.to_list()]


def analyse(rows: list[dict[str, Any]], gold: dict[str, QAItem], method: str) -> dict[str, Any]:
    mine = [r for r in rows if r["method"] == method and r["id"] in gold and gold[r["id"]].hops]
    chains = [(r, r["trace"].get("chain") or [], gold[r["id"]]) for r in mine]
    planned = [c for c in chains if c[1]]
    aligned = [(hop, g) for _, chain, item in planned if len(chain) == len(item.hops) for hop, g in zip(chain, item.hops)]
    grounded = [r for r, chain, _ in planned if all(h["grounded"] for h in chain)]
    ungrounded = [r for r, chain, _ in planned if not all(h["grounded"] for h in chain)]
    wrong = [(r, chain, item) for r, chain, item in chains if not r["em"]]
    breaks = {b: 0 for b in BREAKS}
    for _, chain, item in wrong:
        breaks[first_break(chain, item) if chain else "plan"] += 1
    oracle = {r["id"]: r for r in rows if r["method"] == "oracle_hops"}
    return {
        "method": method,
        "questions": len(chains),
        "em": _rate([r["em"] for r, _, _ in chains]),
        "planned_as_chain": len(planned),
        "gold_hop_count": _rate([float(len(chain) == len(item.hops)) for _, chain, item in chains]),
        "hop_em": _rate([exact_match(hop["answer"], [answer]) for hop, (_, answer, _) in aligned]),
        "hop_read_gold_paragraph": _rate([float(doc in {_chunk_doc(c) for c in hop["chunk_ids"]}) for hop, (_, _, doc) in aligned]),
        "all_grounded": _rate([float(all(h["grounded"] for h in chain)) for _, chain, _ in planned]),
        "em_grounded_chains": _rate([r["em"] for r in grounded]),
        "em_ungrounded_chains": _rate([r["em"] for r in ungrounded]),
        "wrong_answers": len(wrong),
        "first_break": breaks,
        "oracle_hops_em_on_same": _rate([oracle[r["id"]]["em"] for r, _, _ in chains if r["id"] in oracle]),
    }


def run_arguments(description: str) -> argparse.ArgumentParser:
    """The options of a study read from a MuSiQue run (this one and `hop_evidence.py`)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("run", type=Path, help="a results/<dataset>/<run> folder of a MuSiQue run")
    parser.add_argument("--method", default="enrichrag_no_enrich")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--config", default="configs/musique.yaml")
    parser.add_argument("--out", required=True)
    return parser


def main() -> int:
    args = run_arguments(__doc__.splitlines()[0]).parse_args()
    ev = load_config(args.params, args.config).eval
    gold = {item.id: item for item in load_questions(ev.questions, ev.format)}
    rows = [json.loads(line) for line in (args.run / "predictions.jsonl").read_text().splitlines() if line.strip()]
    result = {"run": str(args.run)} | analyse(rows, gold, args.method)
    table = Table(title=f"{args.run.name} {args.method}: chains against the gold chains ({result['questions']} questions)")
    table.add_column("measure")
    table.add_column("value")
    for key, value in result.items():
        if key not in ("run", "method"):
            table.add_row(key, json.dumps(value))
    Console().print(table)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0
