"""Where the loop loses to its own search: each setting of the loop beside one read of the search's top k
passages (k = 2, 3, 5; `EnrichRAG.search`, the loop's own answer prompt, one reader call), paired on the
same questions, read-only. For every question a plain read gets right and a setting misses, the step that
lost it, from the setting's trace:

- plan:   the question was planned as a chain and answered by its hops;
- bridge: the bridge check read on past the whole read's answer;
- choice: no passage the loop read states the gold answer (the tree's, the hop's or growth's choice);
- pick:   one of its reads answered right, and the lowest-perplexity pick kept another;
- read:   it read a passage that states the gold and answered from another line of it.

Per question: seconds, reader calls and prompt tokens computed (llama.cpp's prefill). Each method starts
from the cache a served question finds (the plan and read prompt heads, `Resources.warm_prompts`), never
from the method before it: the next method's read of the same passages would be served from the cache.
A folder (`--folder`, holding docs/ and questions.jsonl) is built as a user builds it; a dev set
(`--config`) must be built (`dvc repro eval_graph_index@<set>`).

    python -m benchmarks.search_read --folder data/own_documents/npm-docs --name npm
    python -m benchmarks.search_read --config configs/nq.yaml --start 0 --limit 40 --name nq
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.question_sets import add_arguments, open_set
from enrich_rag.agent.hops import grounded
from enrich_rag.agent.sufficiency import check_sufficiency
from enrich_rag.agent.trace import Bridged, ContextBuilt, Planned, Read
from enrich_rag.api import EnrichRAG
from enrich_rag.eval.metrics import exact_match
from enrich_rag.eval.stats import bootstrap, mcnemar_exact, paired_difference
from enrich_rag.evidence.lines import near_question
from enrich_rag.llm.base import TokenCount
from enrich_rag.text import states

ROOT = Path(__file__).resolve().parents[1]
KS = (2, 3, 5)
STEPS = ("plan", "bridge", "choice", "pick", "read")


def _tokens(rag: EnrichRAG) -> TokenCount:
    return getattr(rag.resources.llm, "tokens", TokenCount())


def plain_read(rag: EnrichRAG, question: str, k: int, after: int | None = None) -> dict[str, Any]:
    """One reader call over the search's top k passages, whole (or `cut` with `after`), with the loop's
    answer prompt."""
    before, start = _tokens(rag).copy(), time.perf_counter()
    passages = rag.search(question, k)
    passages = passages if after is None else [near_question(p, question, after) for p in passages]
    read = check_sufficiency(rag.resources.llm, question, list(passages), rag.config.llm.max_new_tokens)
    return {
        "answer": read.answer,
        "stated": grounded(read, question),
        "seconds": round(time.perf_counter() - start, 3),
        "reader_calls": 1,
        "chunk_ids": [p.id for p in passages],
        **_tokens(rag).since(before),
    }


def loop_read(rag: EnrichRAG, question: str, setting: dict[str, Any]) -> dict[str, Any]:
    agent_config = dataclasses.replace(rag.config.agent, **setting.get("agent", {}))
    evidence = dataclasses.replace(rag.config.evidence, **setting.get("evidence", {}))
    before, start = _tokens(rag).copy(), time.perf_counter()
    answer = rag.ask(question, enrich="never", settings=(agent_config, evidence))
    plan = answer.trace.first(Planned)
    return {
        "answer": answer.answer,
        "quote": answer.quote.to_dict() if answer.quote else None,
        "sure": answer.sure,
        "under_threshold": answer.perplexity < answer.threshold,  # the perplexity rule's sure
        "seconds": round(time.perf_counter() - start, 3),
        "reader_calls": answer.trace.reader_calls(),
        **_tokens(rag).since(before),
        "planned": plan.plan.kind if plan else None,
        "chain": bool(answer.chain),
        "bridged": any(b.goes_on for b in answer.trace.records(Bridged)),
        "reads": [r.answer for r in answer.trace.records(Read)],
        "read_chunk_ids": list(dict.fromkeys(i for c in answer.trace.records(ContextBuilt) for i in c.chunk_ids)),
        "cited": [c.chunk_id for c in answer.citations],
        "spent": answer.spent,  # why the answer's bound ended its reading (None: it was not reached)
        "steps": [[str(step.kind), step.seconds] for step in answer.trace.steps],  # where its seconds went
    }


def lost_at(rag: EnrichRAG, row: dict[str, Any], gold: list[str]) -> str:
    """The step of the loop that lost a question its plain read answered right."""
    if row["bridged"]:
        return "bridge"
    if row["chain"]:
        return "plan"
    texts = [p.content for p in rag.resources.passages.by_ids(row["read_chunk_ids"])]
    if not any(states(t, g) for t in texts for g in gold):
        return "choice"
    if any(exact_match(a, gold) for a in row["reads"]):
        return "pick"
    return "read"


def summary(rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    right = [float(r[name]["right"]) for r in rows]
    em = bootstrap(right)
    per = [r[name] for r in rows]
    return {
        "em": [round(em.value, 3), *em.to_list()],
        "right": int(sum(right)),
        "seconds_p50": round(_median([p["seconds"] for p in per]), 2),
        "reader_calls_mean": round(sum(p["reader_calls"] for p in per) / len(per), 2),
        "prefill_tokens_mean": round(sum(p["prefill_tokens"] for p in per) / len(per), 1),
        "prefill_tokens_p50": _median([p["prefill_tokens"] for p in per]),
    }


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return float(ordered[mid]) if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def paired(rows: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """`a` minus `b` on the same questions: EM difference with its interval, wins, losses, McNemar p."""
    ra, rb = [r[a]["right"] for r in rows], [r[b]["right"] for r in rows]
    diff = paired_difference([float(x) for x in ra], [float(x) for x in rb])
    return {
        "em_difference": [round(diff.value, 3), *diff.to_list()],
        "won": sum(x and not y for x, y in zip(ra, rb, strict=True)),
        "lost": sum(y and not x for x, y in zip(ra, rb, strict=True)),
        "mcnemar_p": round(mcnemar_exact(ra, rb), 3),
    }


def read_first(rows: list[dict[str, Any]], setting: str, k: int) -> dict[str, Any]:
    """Replayed with no reader call: answer with the plain top-k read when what it read states its answer,
    else as `setting` does (whose one-hop reads start with that same read): read first, plan only when
    the read is unsure. Its EM beside the plain read's and the setting's, its tokens and calls."""
    name = f"read_first_top{k}_then_{setting}"
    for r in rows:
        plain = r[f"top{k}"]
        r[name] = plain if plain["stated"] else r[setting]
    return {"summary": summary(rows, name), f"- top{k}": paired(rows, name, f"top{k}"), f"- {setting}": paired(rows, name, setting)}


def quote_vs_sure(rows: list[dict[str, Any]], setting: str) -> dict[str, Any]:
    """How well each flag tells right from wrong answers: the share right among flagged and unflagged."""

    def split(flag: str) -> dict[str, Any]:
        on = [r[setting]["right"] for r in rows if r[setting][flag]]
        off = [r[setting]["right"] for r in rows if not r[setting][flag]]
        return {"flagged": len(on), "right_flagged": sum(on), "unflagged": len(off), "right_unflagged": sum(off)}

    for r in rows:
        r[setting]["quoted"] = r[setting]["quote"] is not None
    right = [r for r in rows if r[setting]["right"]]
    stating = [r for r in right if r[setting]["quote"] and any(states(r[setting]["quote"]["text"], g) for g in r["gold"])]
    return {
        "under_threshold": split("under_threshold"),
        "quoted": split("quoted"),
        "right_with_quote_stating_gold": [len(stating), len(right)],
    }


def settings_of(specs: list[str]) -> dict[str, dict[str, Any]]:
    """`name` or `name:section.key=value,...` (section: agent or evidence; values as YAML)."""
    import yaml

    found: dict[str, dict[str, Any]] = {}
    for spec in specs:
        name, _, overrides = spec.partition(":")
        setting: dict[str, Any] = {}
        for pair in filter(None, overrides.split(",")):
            key, _, value = pair.partition("=")
            section, _, field_name = key.partition(".")
            setting.setdefault(section, {})[field_name] = yaml.safe_load(value)
        found[name] = setting
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--name", required=True, help="the set's name in the output file")
    parser.add_argument("--setting", action="append", default=[], help="a loop setting to run (repeatable; default: `default`)")
    parser.add_argument("--ks", default=",".join(map(str, KS)))
    parser.add_argument(
        "--cut",
        default="",
        help="also read the first k's passages cut to the units near the question's words, "
        "each with this many units after it (comma-separated)",
    )
    parser.add_argument("--plain-only", action="store_true", help="only the plain reads (and cuts), no loop setting")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = {} if args.plain_only else settings_of(args.setting or ["default"])
    ks = [int(k) for k in args.ks.split(",") if k]
    cuts = [int(a) for a in args.cut.split(",") if a]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()  # what it runs
    rag, questions = open_set(args)
    out = args.out or ROOT / "bench_results" / f"search_read_{args.name}.json"
    partial = out.with_suffix(".partial.jsonl")  # each question's row as it is done: a crash keeps them
    partial.unlink(missing_ok=True)
    rows = []
    for q in tqdm(questions, desc=args.name, unit="q"):
        row: dict[str, Any] = {"id": q["id"], "question": q["question"], "gold": q["answers"]}
        for name, setting in settings.items():
            rag.resources.warm_prompts()  # each method meets the cache a served question meets: the prompt heads
            row[name] = loop_read(rag, q["question"], setting)
        for k in ks:
            rag.resources.warm_prompts()
            row[f"top{k}"] = plain_read(rag, q["question"], k)
        for after in cuts:
            rag.resources.warm_prompts()
            row[f"top{ks[0]}_cut{after}"] = plain_read(rag, q["question"], ks[0], after)
        plain = [*(f"top{k}" for k in ks), *(f"top{ks[0]}_cut{a}" for a in cuts)]
        for key in [*settings, *plain]:
            row[key]["right"] = bool(exact_match(row[key]["answer"], q["answers"]))
        for name in settings:
            for k in ks:
                if row[f"top{k}"]["right"] and not row[name]["right"]:
                    row[name].setdefault("lost_at", {})[f"top{k}"] = lost_at(rag, row[name], q["answers"])
        rows.append(row)
        with partial.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
    plain = [*(f"top{k}" for k in ks), *(f"top{ks[0]}_cut{a}" for a in cuts)]
    methods = [*settings, *plain]
    result = {
        "commit": commit,
        "set": args.name,
        "source": str(args.folder or args.config),
        "slice": None if args.folder else [args.start + 1, args.start + len(questions)],
        "questions": len(rows),
        "settings": settings,
        "summary": {m: summary(rows, m) for m in methods},
        "paired": {f"{s} - top{k}": paired(rows, s, f"top{k}") for s in settings for k in ks},
        "lost_at": {
            s: {f"top{k}": {step: sum(r[s].get("lost_at", {}).get(f"top{k}") == step for r in rows) for step in STEPS} for k in ks}
            for s in settings
        },
        "rows": rows,
    }
    for name in settings:
        result[f"quote_vs_sure_{name}"] = quote_vs_sure(rows, name)
        result[f"replayed_{name}"] = {f"top{k}": read_first(rows, name, k) for k in ks}
    result["paired"] |= {f"top{ks[0]}_cut{a} - top{ks[0]}": paired(rows, f"top{ks[0]}_cut{a}", f"top{ks[0]}") for a in cuts}
    if len(settings) > 1:
        names = list(settings)
        result["paired"] |= {f"{a} - {names[0]}": paired(rows, a, names[0]) for a in names[1:]}
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    table = Table(title=f"{args.name}: {len(rows)} questions, read-only")
    for column in ("method", "EM [95%]", "right", "p50 s", "reader calls", "prompt tokens"):
        table.add_column(column)
    for m in methods:
        s = result["summary"][m]
        table.add_row(
            m,
            f"{s['em'][0]} [{s['em'][1]}, {s['em'][2]}]",
            str(s["right"]),
            str(s["seconds_p50"]),
            str(s["reader_calls_mean"]),
            str(s["prefill_tokens_mean"]),
        )
    console = Console()
    console.print(table)
    for key, p in result["paired"].items():
        console.print(f"{key}: {p['em_difference']}  won {p['won']} lost {p['lost']}  p {p['mcnemar_p']}")
    console.print(f"lost at: {result['lost_at']}")
    partial.unlink()
    console.print(f"wrote {out}")


if __name__ == "__main__":
    main()
