"""The loop's time on each dev set, quiet: seconds a question end to end, reader calls and the tokens
they cost (prefill computed, served from llama.cpp's prompt cache, generated), overall and by the plan's
kind (one hop against a chain or side-by-side hops). The reader is loaded once and warmed on a question
outside the measured range; each set reads its own build. `--enrich background`: writes allowed, an
unsure answer queues its round (on a writable copy of the build) instead of waiting for it; the queue is
not run, so the time is the answer's alone: the foreground cost of writes. `--enrich interleaved` asks
each question both ways, one after the other in alternating order, and reports the same pairing plus
the seconds the write steps themselves took. `--paired-with` a read-only
run of the same sets and ranges adds, per set, the p50 with writes over the p50 read-only and the mean
difference in seconds, each with its paired interval (the same questions resampled together).

    python -m benchmarks hop_latency --set nq=configs/nq.yaml:1:30 --set musique=configs/musique.yaml:1:30 \
        --out bench_results/fast_answer_latency.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.agent import _pct
from enrich_rag.agent.plan import ONE_HOP
from enrich_rag.agent.trace import Planned, StepKind
from enrich_rag.api import EnrichRAG
from enrich_rag.config import Config
from enrich_rag.eval.methods import CountingLLM
from enrich_rag.eval.prepare import sampled_questions
from enrich_rag.eval.runner import ensure_built, load_eval
from enrich_rag.eval.stats import CONFIDENCE, paired_difference, resample
from enrich_rag.llm.base import TokenCount
from enrich_rag.llm.factory import make_llm
from enrich_rag.llm.models import model_name
from enrich_rag.storage.workspace import writable_copy

TOKENS = ("prefill_tokens", "cached_tokens", "generated_tokens")


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"questions": 0}
    p50, p95 = _pct([r["seconds"] for r in rows])
    tokens = {f"{t}_mean": round(statistics.mean(r[t] for r in rows), 1) for t in TOKENS if all(t in r for r in rows)}
    return {
        "questions": len(rows),
        "p50_s": round(p50, 2),
        "p95_s": round(p95, 2),
        "llm_calls_mean": round(statistics.mean(r["llm_calls"] for r in rows), 2),
        "queued": sum(r.get("queued", 0) for r in rows),
    } | tokens


WRITE_STEPS = (StepKind.QUEUE_ENRICHMENT, StepKind.LEARN)  # the steps only an answer that may write takes


def _asked(session: EnrichRAG, llm: CountingLLM, item: Any, allow: str) -> dict[str, Any]:
    """One question's row: seconds, reader calls and tokens, the plan's kind, and the seconds its write steps took."""
    counted: TokenCount | None = getattr(llm.inner, "tokens", None)
    before, tokens_before = llm.calls, counted.copy() if counted is not None else None
    answer = session.ask(item.question, enrich=allow)
    planned = answer.trace.first(Planned)
    kind = planned.plan.kind if planned else ONE_HOP
    written = sum(step.seconds for step in answer.trace.steps if step.kind in WRITE_STEPS)
    row = {"id": item.id, "seconds": answer.trace.seconds, "llm_calls": llm.calls - before, "plan": kind}
    tokens = counted.since(tokens_before) if counted is not None and tokens_before is not None else {}
    return row | {"queued": len(answer.queued), "write_s": round(written, 4)} | tokens


def _by_kind(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "all": _summary(rows),
        "one_hop": _summary([r for r in rows if r["plan"] == ONE_HOP]),
        "hops": _summary([r for r in rows if r["plan"] != ONE_HOP]),
        "rows": rows,
    }


def _questions(params: str, overlay: str, first: int, last: int) -> tuple[Config, str, Any, list[Any]]:
    config, ev = load_eval(params, overlay)
    ensure_built(config, ev)
    items = sampled_questions(ev)
    return config, ev.dataset, items[last] if last < len(items) else items[0], items[first - 1 : last]


def measure(
    params: str, overlay: str, first: int, last: int, llm: CountingLLM, enrich: str = "off", workdir: Path | None = None
) -> dict[str, Any]:
    config, dataset, warm, measured = _questions(params, overlay, first, last)
    if enrich != "off":
        assert workdir is not None
        config = writable_copy(config, workdir / dataset)  # queued jobs and the graph they would grow stay in the copy
    allow = enrich if enrich != "off" else "never"
    with EnrichRAG(config, llm=llm, reconcile=False) as session:
        session.ask(warm.question, enrich="never")  # model, index and store loads
        rows = [_asked(session, llm, item, allow) for item in tqdm(measured, desc=dataset, unit="q")]
    return {"range": [first, last]} | _by_kind(rows)


def measure_interleaved(params: str, overlay: str, first: int, last: int, llm: CountingLLM, workdir: Path) -> dict[str, Any]:
    """Each question read-only and with writes allowed (a writable copy, rounds queued, not run), one
    after the other, the order alternating: the machine's drift over a run falls on both alike."""
    config, dataset, warm, measured = _questions(params, overlay, first, last)
    rows: dict[str, list[dict[str, Any]]] = {"read_only": [], "background": []}
    with (
        EnrichRAG(config, llm=llm, reconcile=False) as plain,
        EnrichRAG(writable_copy(config, workdir / dataset), llm=llm, reconcile=False) as writing,
    ):
        sessions: dict[str, tuple[EnrichRAG, str]] = {"read_only": (plain, "never"), "background": (writing, "background")}
        for session, _ in sessions.values():
            session.ask(warm.question, enrich="never")
        for i, item in enumerate(tqdm(measured, desc=f"{dataset}, read-only and writes", unit="q")):
            for mode in ("read_only", "background") if i % 2 == 0 else ("background", "read_only"):
                session, allow = sessions[mode]
                rows[mode].append(_asked(session, llm, item, allow))
    writes = rows["background"]
    return {
        "range": [first, last],
        "read_only": _by_kind(rows["read_only"]),
        "background": _by_kind(writes),
        "paired": paired(writes, rows["read_only"]),
        "write_steps_s": {"mean": round(statistics.mean(r["write_s"] for r in writes), 4), "max": max(r["write_s"] for r in writes)},
    }


def paired(rows: list[dict[str, Any]], against: list[dict[str, Any]], resamples: int = 2000) -> dict[str, Any]:
    """These rows' p50 over the same questions' p50 in `against`, and the mean difference in seconds."""
    by_id = {r["id"]: r for r in against}
    kept = [r for r in rows if r["id"] in by_id]
    if not kept:
        raise ValueError("the paired run answered none of these questions")
    ids = [r["id"] for r in kept]
    mine = np.array([r["seconds"] for r in kept])
    theirs = np.array([by_id[i]["seconds"] for i in ids])
    draws = resample(len(ids), resamples, 0)
    ratios = np.median(mine[draws], axis=1) / np.median(theirs[draws], axis=1)
    tail = (1 - CONFIDENCE) / 2 * 100
    diff = paired_difference(mine, theirs)
    return {
        "questions": len(ids),
        "p50_s": [round(float(np.median(mine)), 2), round(float(np.median(theirs)), 2)],
        "p50_ratio": round(float(np.median(mine) / np.median(theirs)), 3),
        "p50_ratio_ci": [round(float(x), 3) for x in np.percentile(ratios, [tail, 100 - tail])],
        "seconds_mean_diff": round(diff.value, 3),
        "seconds_mean_diff_ci": diff.to_list(),
        "llm_calls_mean": [
            round(statistics.mean(r["llm_calls"] for r in kept), 2),
            round(statistics.mean(by_id[i]["llm_calls"] for i in ids), 2),
        ],
    }


def _parts(s: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A set's table rows: by plan kind, and by mode where each question ran both ways."""
    kinds = ("all", "one_hop", "hops")
    if "read_only" in s:
        return [(f"{mode.replace('_', '-')}: {kind}", s[mode][kind]) for mode in ("read_only", "background") for kind in kinds]
    return [(kind, s[kind]) for kind in kinds]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, help="name=configs/<dataset>.yaml:first:last (1-based)")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument(
        "--enrich",
        choices=["off", "background", "interleaved"],
        default="off",
        help="background: writes allowed, rounds queued; interleaved: each question both ways, alternating",
    )
    parser.add_argument("--paired-with", type=Path, help="a read-only run of the same sets and ranges (its JSON)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    config, _ = load_eval(args.params, args.set[0].split("=", 1)[1].split(":")[0])
    llm = CountingLLM(make_llm(config.llm))
    result: dict[str, Any] = {"reader": model_name(config.llm), "allow_enrich": args.enrich != "off", "enrich": args.enrich, "sets": {}}
    with tempfile.TemporaryDirectory() as workdir:
        for spec in args.set:
            name, rest = spec.split("=", 1)
            overlay, first, last = rest.split(":")
            if args.enrich == "interleaved":
                result["sets"][name] = measure_interleaved(args.params, overlay, int(first), int(last), llm, Path(workdir))
            else:
                result["sets"][name] = measure(args.params, overlay, int(first), int(last), llm, args.enrich, Path(workdir))
    if args.paired_with:
        before = json.loads(args.paired_with.read_text(encoding="utf-8"))["sets"]
        for name, s in result["sets"].items():
            s["paired"] = {"against": str(args.paired_with)} | paired(s["rows"], before[name]["rows"])
    table = Table(title=f"the loop's time, quiet, enrichment {args.enrich}, reader {result['reader']}")
    for column in ("set", "plan", "n", "p50 s", "p95 s", "reader calls", "prefill tokens", "cached tokens", "generated tokens", "queued"):
        table.add_column(column, justify="left" if column in ("set", "plan") else "right")
    for name, s in result["sets"].items():
        for part, x in _parts(s):
            if x["questions"]:
                tokens = [f"{x[f'{t}_mean']:.0f}" if f"{t}_mean" in x else "-" for t in TOKENS]
                times = [f"{x['p50_s']:.2f}", f"{x['p95_s']:.2f}", f"{x['llm_calls_mean']:.2f}"]
                table.add_row(name, part, str(x["questions"]), *times, *tokens, str(x["queued"]))
    Console().print(table)
    for name, s in result["sets"].items():
        if "paired" in s:
            p = s["paired"]
            Console().print(
                f"{name}: p50 {p['p50_s'][0]:.2f} s against {p['p50_s'][1]:.2f} s read-only, ratio {p['p50_ratio']:.3f} "
                f"{p['p50_ratio_ci']}; mean difference {p['seconds_mean_diff']:+.2f} s {p['seconds_mean_diff_ci']}"
            )
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
