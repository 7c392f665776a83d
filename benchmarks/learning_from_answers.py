"""What the loop would learn from its answers: the facts each answer queues (`enrich="background"`: queued,
not committed, so every question meets the same graph), and how many of them are facts: the share whose
subject is a node of the built graph (not a piece of the question's text) and the share whose object is
the gold answer. Uses only the public API, so the same file measures an older checkout (`PYTHONPATH`).

    python -m benchmarks.learning_from_answers --folder data/own_documents/npm-docs --workspace /tmp/ws/lf --label after
    python -m benchmarks.learning_from_answers --config configs/hotpotqa.yaml --start 0 --limit 20 --label after

An older checkout is measured by importing its `enrich_rag` before this file's `benchmarks` (its `sys.path` first).
A dev set's queue is its build's own: emptied before and after the run, so the build is left as it was.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tqdm import tqdm

from benchmarks.question_sets import add_arguments, open_set
from enrich_rag.agent.trace import Learned
from enrich_rag.eval.metrics import exact_match
from enrich_rag.storage.ids import node_id

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--label", required=True, help="before | after: the key this run writes")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.folder and not args.workspace:
        raise SystemExit("error: --folder needs --workspace, a throwaway build (its job queue fills)")
    rag, questions = open_set(args)
    queue = rag.resources.jobs.root
    shutil.rmtree(queue, ignore_errors=True)  # a rerun starts with an empty queue
    facts: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    for q in tqdm(questions, desc=args.label, unit="q"):
        answer = rag.ask(q["question"], enrich="background")
        answers.append(
            {
                "question": q["question"],
                "gold": q["answers"],
                "answer": answer.answer,
                "right": bool(exact_match(answer.answer, q["answers"])),
            }
        )
        for record in answer.trace.records(Learned):
            for fact in record.facts:
                facts.append(
                    {
                        "question": q["question"],
                        "subject": fact.subject,
                        "relation": fact.relation,
                        "object": fact.object,
                        "evidence": fact.evidence,
                        "subject_in_graph": rag.resources.store.node(node_id(fact.subject)) is not None,
                        "object_is_gold": bool(exact_match(fact.object, q["answers"])),
                    }
                )
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path.cwd()).stdout.strip()
    share = {k: round(sum(f[k] for f in facts) / len(facts), 3) if facts else None for k in ("subject_in_graph", "object_is_gold")}
    right = sum(a["right"] for a in answers)
    run = {"commit": commit, "questions": len(questions), "right": right, "facts": len(facts), **share, "rows": facts, "answers": answers}
    if args.config:
        shutil.rmtree(queue, ignore_errors=True)  # the dev set's build is left as it was
    name = args.folder.name if args.folder else f"{args.config.stem}_{args.start + 1}_{args.start + args.limit}"
    out = args.out or ROOT / "bench_results" / f"learned_facts_{name}.json"
    result = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {"source": str(args.folder or args.config)}
    result[args.label] = run
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"{args.label}: {len(facts)} facts from {len(questions)} answers; {share}; wrote {out}")


if __name__ == "__main__":
    main()
