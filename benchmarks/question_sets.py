"""A benchmark's questions and the project they are asked of: a documentation folder (docs/ and
questions.jsonl, built as a user builds it) or a built dev set (configs/<set>.yaml, a slice of its questions).
Only the public API and the evaluation's loaders, so an older checkout's package can be measured with it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from enrich_rag.api import EnrichRAG
from enrich_rag.eval.datasets import load_questions
from enrich_rag.eval.runner import load_eval

ROOT = Path(__file__).resolve().parents[1]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--folder", type=Path, help="a documentation folder: docs/ and questions.jsonl")
    parser.add_argument("--workspace", type=Path, help="where the folder's build goes (default: beside it, as `build` does)")
    parser.add_argument("--config", type=Path, help="a dev set's overlay (configs/<set>.yaml), built")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--limit", type=int, default=40)


def open_set(args: argparse.Namespace) -> tuple[EnrichRAG, list[dict[str, Any]]]:
    """The project and its questions, each `{id, question, answers}`."""
    if args.folder:
        rag = EnrichRAG.from_folder(args.folder / "docs", args.workspace)
        lines = (args.folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        questions = [json.loads(line) for line in lines if line.strip()]
        return rag, [{"id": str(i), "question": q["question"], "answers": q["answers"]} for i, q in enumerate(questions)]
    if not args.config:
        raise SystemExit("error: give --folder (docs/ and questions.jsonl) or --config (a built dev set)")
    rag = EnrichRAG.open(ROOT / "params.yaml", args.config)
    _, evaluation = load_eval(ROOT / "params.yaml", args.config)
    items = load_questions(ROOT / evaluation.questions, evaluation.format)[args.start : args.start + args.limit]
    return rag, [{"id": q.id, "question": q.question, "answers": list(q.answers)} for q in items]
