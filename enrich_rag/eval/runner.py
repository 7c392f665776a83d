"""One evaluation run: build the dataset if needed, run every method on every question, report.

Predictions are appended one line per (question, method) and fsynced, so Ctrl-C keeps everything
finished and a rerun of the same run id skips it. Questions are the outer loop, so an interrupted
run still compares all methods on the same questions.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from tqdm import tqdm

from enrich_rag.agent.confidence import confidence_file
from enrich_rag.api import EnrichRAG
from enrich_rag.config import Config, EvalConfig, load_config
from enrich_rag.errors import ConfigError
from enrich_rag.eval.datasets import QAItem
from enrich_rag.eval.judge import judge
from enrich_rag.eval.methods import AGENT_METHODS, CountingLLM, Prediction, make_method
from enrich_rag.eval.metrics import all_evidence_at_k, contains_answer, exact_match, precision_at_k, recall_at_k, token_f1
from enrich_rag.eval.prepare import prepare_eval, questions_path, sampled_questions
from enrich_rag.eval.report import write_report
from enrich_rag.llm.base import LLM
from enrich_rag.llm.factory import make_llm
from enrich_rag.llm.models import model_name
from enrich_rag.stages.build_keys import build_key
from enrich_rag.stages.pipeline import ensure_built as build
from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.workspace import writable_copy

console = Console(stderr=True)
PREDICTIONS = "predictions.jsonl"
RESOLVED_CONFIG = "config.yaml"
WORKSPACE = "workspace"


def default_run_id(config: Config) -> str:
    """Named from the settings that pick the questions and the reader, so runs of two readers or
    samples sit side by side and `dvc.yaml`'s outs name the folder a run really writes."""
    ev = config.eval
    return f"{ev.sample or 'all'}q-seed{ev.seed}-{model_name(config.llm)}"


def run_folder(ev: EvalConfig) -> Path:
    return Path(ev.output) / ev.dataset / ev.run_id


def load_eval(params: Path | str, overlay: Path | str) -> tuple[Config, EvalConfig]:
    config = load_config(params, overlay)
    if not config.eval.questions:
        raise ConfigError("eval.questions is not set (use configs/<dataset>.yaml)")
    ev = config.eval if config.eval.run_id else dataclasses.replace(config.eval, run_id=default_run_id(config))
    return dataclasses.replace(config, eval=ev), ev


def ensure_built(config: Config, ev: EvalConfig) -> None:
    """The dataset's corpus (questions and their passages) first, then every stage missing or stale.
    Questions written over a build (`eval.corpus: built`) prepare nothing: the build is read as it is."""
    prepare = (
        "prepare",
        lambda: questions_path(config).is_file() and Path(config.corpus.source).is_file(),
        lambda: prepare_eval(config, ev),
    )
    build(config, ev.dataset, None if ev.over_built_corpus else prepare)


def read_predictions(path: Path) -> list[dict[str, Any]]:
    """Finished lines; a line cut short by an interruption is dropped (and rewritten away)."""
    if not path.is_file():
        return []
    rows, lines = [], path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break
    if len(rows) != len([line for line in lines if line.strip()]):
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return rows


# Settings no answer depends on: where files live, how many threads compute it, how long a request
# may wait, and the sections other commands read. Changing them must not throw a half-done run away.
RUNTIME_ONLY = ("paths", "serve", "testset", "build", "ray")
RUNTIME_ONLY_LLM = ("threads", "timeout_s", "retries", "cache_dir")


def workspace_name(method: str) -> str:
    """Each enriching method grows its own copy of the graph, so one method's partitions never help another."""
    return WORKSPACE if method == "enrichrag" else f"{WORKSPACE}-{method}"


def fingerprint(config: Config, ev: EvalConfig) -> str:
    """What the answers depend on (models, retrieval and agent settings, the question sample)."""
    import hashlib

    data = dataclasses.asdict(config)
    for name in RUNTIME_ONLY:
        data.pop(name)
    for name in RUNTIME_ONLY_LLM:
        data["llm"].pop(name)
    data["eval"] = {k: v for k, v in dataclasses.asdict(ev).items() if k not in ("output", "run_id", "methods", "bootstrap")}
    data["build"] = build_key(config)  # a rebuilt seed or index is a new run, whatever the settings say
    model = confidence_file(config.paths.root)
    if model.is_file():  # the corpus's fitted model decides sure and unsure, and so where the loop enriches
        data["confidence_model"] = hashlib.sha1(model.read_bytes()).hexdigest()
    # Where the checkout lives is no setting: paths count relative to the project, so a moved or second
    # checkout (a git worktree) resumes the same run.
    text = json.dumps(data, sort_keys=True, default=str).replace(str(Path(config.paths.dvc_root).resolve()) + "/", "")
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def check_fingerprint(run_dir: Path, current: str) -> None:
    """A run resumes only with the settings it started with; otherwise its answers are moved aside, not mixed in."""
    path, out = run_dir / "fingerprint.txt", run_dir / PREDICTIONS
    previous = path.read_text().strip() if path.is_file() else None
    if previous and previous != current and out.is_file():
        aside = run_dir / f"predictions.{previous}.jsonl"
        os.replace(out, aside)
        console.print(f"[yellow]settings changed since this run started: earlier answers moved to {aside.name}[/yellow]")
    for workspace in sorted(run_dir.glob(f"{WORKSPACE}*")) if previous and previous != current else ():
        if workspace.is_dir() and workspace.name.split(".")[0] == workspace.name:
            # The enriched copy grew from the old build: a new run starts from the build as it is now.
            os.replace(workspace, run_dir / f"{workspace.name}.{previous}")
    path.write_text(current + "\n")


def write_resolved_config(run_dir: Path, config: Config, ev: EvalConfig, ran: set[str]) -> None:
    """The settings this run answered with, every default filled in, beside its results; its methods are
    the ones that answered (`ran`), not every method the config could have run."""
    import dataclasses

    import yaml

    ev = dataclasses.replace(ev, methods=tuple(m for m in ev.methods if m in ran))
    data = dataclasses.asdict(config) | {"eval": dataclasses.asdict(ev)}
    with atomic_file(run_dir / RESOLVED_CONFIG) as tmp:
        tmp.write_text(yaml.safe_dump(json.loads(json.dumps(data, default=str)), sort_keys=False), encoding="utf-8")


def score_row(item: QAItem, method: str, prediction: Prediction, ks: tuple[int, ...]) -> dict[str, Any]:
    golds = list(item.answers)
    row: dict[str, Any] = {
        "id": item.id,
        "method": method,
        "question": item.question,
        "gold": golds,
        "type": item.type,
        "prediction": prediction.answer,
        "evidence_ids": prediction.docs,
        "read_docs": prediction.read,
        "em": exact_match(prediction.answer, golds),
        "f1": round(token_f1(prediction.answer, golds), 4),
        "acc": contains_answer(prediction.answer, golds),
        "llm_calls": prediction.llm_calls,
        "enrich_rounds": prediction.enrich_rounds,
        "partitions": prediction.partitions,
        "seconds": round(prediction.seconds, 4),
        "trace": prediction.trace,
    } | prediction.tokens
    if item.has_gold and method != "no_retrieval":
        gold = set(item.gold_docs)
        row["gold_read"] = float(gold <= set(prediction.read))  # what the reader was handed held every gold passage
        for k in ks:
            row[f"recall@{k}"] = round(recall_at_k(prediction.docs, gold, k), 4)
            row[f"all@{k}"] = all_evidence_at_k(prediction.docs, gold, k)
            row[f"precision@{k}"] = round(precision_at_k(prediction.docs, gold, k), 4)
    return row


def run_questions(ev: EvalConfig, limit: int = 0) -> list[QAItem]:
    """The sampled questions a run answers: past `eval.skip`, at most `limit` (0: all)."""
    return sampled_questions(ev)[ev.skip :][: limit or None]


def run_evaluation(
    params: Path | str, overlay: Path | str, limit: int = 0, only: tuple[str, ...] = (), wide: bool = False, reader: LLM | None = None
) -> Path:
    """`only`: run just these of the config's methods now (the report still covers every method with answers).
    `wide`: every console column (the default fits 80 columns; table.md has them all). `reader`: one
    already loaded for the same `llm` settings (a project's own), used instead of loading another."""
    config, ev = load_eval(params, overlay)
    unknown = [m for m in only if m not in ev.methods]
    if unknown:
        raise ConfigError(f"--methods {', '.join(unknown)}: not in this config's eval.methods ({', '.join(ev.methods)})")
    running = only or ev.methods
    ensure_built(config, ev)
    items = run_questions(ev, limit)
    run_dir = run_folder(ev)
    run_dir.mkdir(parents=True, exist_ok=True)
    check_fingerprint(run_dir, fingerprint(config, ev))
    out = run_dir / PREDICTIONS
    done = {(r["id"], r["method"]) for r in read_predictions(out)}
    write_resolved_config(run_dir, config, ev, ran={m for _, m in done} | set(running))

    llm = CountingLLM(reader or make_llm(config.llm))
    readonly = EnrichRAG(config, llm=llm, reconcile=False)  # the build itself is never written
    # Each enriching method grows its own copy; an interrupted enrichment is finished or rolled back first.
    writing = {
        m: EnrichRAG(writable_copy(config, run_dir / workspace_name(m)), llm=llm) for m in running if AGENT_METHODS.get(m, (False,))[0]
    }
    methods = {m: make_method(m, writing.get(m, readonly), llm) for m in running}
    judge_llm = llm if ev.judge.enabled and ev.judge.backend == "same" else _judge_llm(config, ev)

    todo = [(item, m) for item in items for m in running if (item.id, m) not in done]
    console.print(f"{ev.dataset}: {len(items)} questions x {len(running)} methods, {len(todo)} to run -> {run_dir}")
    try:
        with open(out, "a", encoding="utf-8") as fh:
            for item, method in tqdm(todo, desc=f"evaluating {ev.dataset}", unit="answer"):
                prediction = methods[method](item)
                row = score_row(item, method, prediction, ks=ev.ks)
                if judge_llm is not None:
                    row |= judge(judge_llm, item.question, prediction.answer, context=prediction.context, gold=list(item.answers))
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
    finally:
        for session in (readonly, *writing.values()):
            session.close()
    rows = [r for r in read_predictions(out) if r["id"] in {i.id for i in items} and r["method"] in ev.methods]
    write_resolved_config(run_dir, config, ev, ran={r["method"] for r in read_predictions(out)})
    write_report(rows, ev, config, run_dir=run_dir, wide=wide)
    return run_dir


def _judge_llm(config: Config, ev: EvalConfig):
    if not ev.judge.enabled:
        return None
    import dataclasses

    llm_config = dataclasses.replace(
        config.llm, backend=ev.judge.backend, model=ev.judge.model or config.llm.model, base_url=ev.judge.base_url or config.llm.base_url
    )
    return make_llm(llm_config)
