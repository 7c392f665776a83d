"""Every question answered inside its time limit: how long answers take and how many reader calls they
make, alone and quiet, before and after an answer's bound; and what the 6 x 3 wave of clients got.

    python -m benchmarks time_limit answers --label after --sets click hotpotqa --limit 100
    # -> bench_results/time_limit_answers_after.json (the default loop only, each question alone)
    python -m benchmarks time_limit report
    # -> table + bench_results/time_limit.json: the answers before and after, paired; every wave of
    #    bench_results/time_limit_wave_*.json (folder_load: one workspace and two, before and after)
"""

from __future__ import annotations

import argparse
import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.cells import signed_interval
from benchmarks.find import measured_sets
from benchmarks.scoreboard import run_set
from benchmarks.search_read import paired
from enrich_rag.eval.stats import bootstrap, paired_rows
from enrich_rag.storage.atomic import atomic_file

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench_results"
# Before the answer's bound: the round's end scoreboard (4a2cb5b, quiet, a machine of the same kind), whose
# default rows are this loop_read of the same questions, under the reader budget of calls and reader seconds.
# Then MuSiQue, the set whose answers the bound cut most (99 of 100 made one reader call): the default with the
# bound lifted (`scoreboard --agent max_answer_s=3600`, 633b519) before, the every-set scoreboard's bounded
# default (aa9ec4c, the same loop; the follow lever's code, off, between them) after. A set is taken from the
# first pair that has it.
PAIRS = (
    (RESULTS / "find_scoreboard_end.json", RESULTS / "time_limit_answers_after.json"),
    (RESULTS / "find_scoreboard_bound_off.json", RESULTS / "find_scoreboard_every_set.json"),
)
LIMIT_S = 25.0  # the bound on an answer alone
BINS = (5, 10, 15, 20, 25, 30)
# The waves' files, time_limit_wave_{one,two}_<stage>.json: before the bound (971d091), with the answer's
# bound and admission planning at recent times, and after (admission planning at the bound too).
WAVE_STAGES = ("before", "answer_bound", "after")


def distribution(rows: list[dict[str, Any]], kind: str = "") -> dict[str, Any]:
    """The default loop's answers: EM, seconds (quantiles, a histogram, how many past the bound), reader
    calls (how many answers made each number) and how many the bound ended."""
    per = [r["default"] for r in rows]
    seconds = sorted(p["seconds"] for p in per)
    em = bootstrap([float(p["right"]) for p in per])
    histogram = Counter(next((f"<{b}" for b in BINS if s < b), f">={BINS[-1]}") for s in seconds)
    return {
        "kind": kind,
        "questions": len(per),
        "em": [round(em.value, 3), *em.to_list()],
        "right": sum(p["right"] for p in per),
        "seconds_p50": seconds[len(seconds) // 2],
        "seconds_p90": seconds[int(0.9 * (len(seconds) - 1))],
        "seconds_max": seconds[-1],
        f"over_{LIMIT_S:g}_s": sum(s > LIMIT_S for s in seconds),
        "seconds_histogram": {label: histogram.get(label, 0) for label in (*(f"<{b}" for b in BINS), f">={BINS[-1]}")},
        "reader_calls": dict(sorted(Counter(p["reader_calls"] for p in per).items())),
        "reader_calls_max": max(p["reader_calls"] for p in per),
        "spent": sum(bool(p.get("spent")) for p in per),
        "prompt_tokens_mean": round(sum(p["prefill_tokens"] for p in per) / len(per), 1),
    }


def answers_report(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per set both runs answered: each run's distribution on the same questions, and after minus before."""
    out = {}
    for name, rows in after["rows"].items():
        if name not in before["rows"]:
            continue
        old, new = paired_rows(before["rows"][name], rows)
        both = [{"before": o["default"], "after": n["default"]} for o, n in zip(old, new, strict=True)]
        out[name] = {
            "before": distribution(old) | _run(before, name),
            "after": distribution(new) | _run(after, name),
            "after - before": paired(both, "after", "before"),
        }
    return out


def _run(result: dict[str, Any], name: str) -> dict[str, Any]:
    """Where a set's answers came from: its commit, and the loop settings its arm changed (if any)."""
    data = result["sets"].get(name, {})
    return {"commit": data.get("commit", result["commit"])} | ({"agent": data["agent"]} if data.get("agent") else {})


def wave_report() -> dict[str, Any]:
    """What each wave's clients got, by file: answered, refused at once, refused after waiting, timed out."""
    keys = ("asked", "answered", "refused_503", "refused_after_waiting", "timed_out_504", "other", "right", "spent")
    out = {}
    for label in (f"{ws}_{stage}" for ws in ("one", "two") for stage in WAVE_STAGES):
        if not (path := RESULTS / f"time_limit_wave_{label}.json").exists():
            continue
        result = json.loads(path.read_text(encoding="utf-8"))
        for name in ("cold", "warm"):
            w = result[name]
            out[f"{label} {name}"] = {k: w.get(k) for k in keys} | {
                "answer_p50_s": w["answer_p50_s"],
                "answer_max_s": w["answer_max_s"],
                "refusal_max_s": w["refusal_max_s"],
                "commit": result["commit"],
                "workspaces": len(result["folders"]),
            }
    return out


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def report() -> None:
    result = {
        "answers": {name: sets for before, after in reversed(PAIRS) for name, sets in answers_report(_read(before), _read(after)).items()},
        "waves": wave_report(),
    }
    console = Console(width=200)
    answers = Table(title=f"answers alone and quiet, before and after: seconds, reader calls, EM (over {LIMIT_S:g} s: past the bound)")
    columns = ("set", "run", "commit", "EM [95%]", "p50 / p90 / max s", f"over {LIMIT_S:g} s", "reader calls: answers", "spent", "tokens")
    for column in columns:
        answers.add_column(column)
    for name, sets in result["answers"].items():
        for run in ("before", "after"):
            d = sets[run]
            answers.add_row(
                name,
                run,
                d["commit"] + "".join(f" {k}={v}" for k, v in d.get("agent", {}).items()),
                f"{d['em'][0]:.3f} [{d['em'][1]:.2f}, {d['em'][2]:.2f}]",
                f"{d['seconds_p50']:.1f} / {d['seconds_p90']:.1f} / {d['seconds_max']:.1f}",
                str(d[f"over_{LIMIT_S:g}_s"]),
                " ".join(f"{k}:{v}" for k, v in d["reader_calls"].items()),
                str(d["spent"]),
                f"{d['prompt_tokens_mean']:.0f}",
            )
        diff = sets["after - before"]
        em = diff["em_difference"]
        answers.add_row(name, "after - before", "", signed_interval(em), f"won {diff['won']}, lost {diff['lost']}")
    console.print(answers)
    waves = Table(title="6 clients x 3 questions at once (60 s limit): what the clients got")
    for column in ("wave", "commit", "answered", "refused at once", "refused after waiting", "timed out (504)", "right", "p50 / max s"):
        waves.add_column(column)
    for name, w in result["waves"].items():
        at_once = w["refused_503"] - w["refused_after_waiting"]
        waves.add_row(
            name,
            w["commit"],
            f"{w['answered']}/{w['asked']}",
            str(at_once),
            str(w["refused_after_waiting"]),
            str(w["timed_out_504"]),
            str(w["right"]),
            f"{w['answer_p50_s']} / {w['answer_max_s']}",
        )
    console.print(waves)
    with atomic_file(RESULTS / "time_limit.json") as tmp:
        tmp.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print("wrote bench_results/time_limit.json")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("answers", "report"))
    args, rest = parser.parse_known_args(argv)
    if args.what == "report":
        report()
        return
    measure = functools.partial(run_set, reads=("default",))
    _, out_path = measured_sets(rest, __doc__ or "", "time_limit_answers_", measure, lambda rows, kind: distribution(rows, kind))
    print(f"wrote {out_path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
