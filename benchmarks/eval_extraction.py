"""Extraction quality against gold: the recall of 2WikiMultihopQA's evidence triples among the facts
each extractor writes from the questions' gold passages, and its cost per chunk.

A gold triple (subject, relation, object) is found when an extracted fact joins the same two nodes
after the graph's own normalisation (the assembly every build uses: node ids, title forms), either
way round; `with_relation` also asks the fact's relation to share a word stem with the gold one.

    python -m benchmarks eval_extraction --config configs/2wiki.yaml --limit 30 --extractors spacy llm
    # -> table + bench_results/extraction_2wiki.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from enrich_rag.eval.runner import load_eval
from enrich_rag.eval.stats import paired_difference
from enrich_rag.extract.assemble import graph_tables
from enrich_rag.extract.factory import make_extractor
from enrich_rag.llm.factory import make_llm
from enrich_rag.llm.models import model_name
from enrich_rag.llm.prompts import fact_prompt
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import STRUCTURAL_RELATIONS
from enrich_rag.text import content_words

STEM = 5


def gold_passages(rows: list[dict]) -> tuple[list[Passage], list[tuple[str, str, str]]]:
    """The questions' gold paragraphs (once each) and their evidence triples."""
    passages: dict[str, Passage] = {}
    triples: list[tuple[str, str, str]] = []
    for row in rows:
        for ctx in row["contexts"]:
            if ctx["title"] in row["supporting_titles"]:
                text = "".join(ctx["sentences"]) if isinstance(ctx["sentences"], list) else ctx["sentences"]
                key = f"{ctx['title']}::{text[:40]}"
                passages.setdefault(key, Passage(f"gold{len(passages)}::c0", f"gold{len(passages)}", ctx["title"], text))
        triples += [tuple(t) for t in row.get("evidences") or []]
    return list(passages.values()), list(dict.fromkeys(triples))


def _stems(text: str) -> set[str]:
    return {w[:STEM] for w in content_words(text)}


def recall(edges: list[dict], triples: list[tuple[str, str, str]]) -> dict[str, Any]:
    pairs: dict[frozenset, list[str]] = {}
    for e in edges:
        pairs.setdefault(frozenset((e["src"], e["dst"])), []).append(e["relation"])
    found = [pairs.get(frozenset((node_id(s), node_id(o))), []) for s, _, o in triples]
    with_relation = [bool(rels) and any(_stems(r) & _stems(rel) for rel in rels) for (_, r, _), rels in zip(triples, found)]
    return {
        "pair": sum(bool(f) for f in found),
        "with_relation": sum(with_relation),
        "gold": len(triples),
        "found": [int(bool(f)) for f in found],  # per gold triple, in order: pairs two runs on the same triples
    }


def _paired(runs: dict[str, dict], baseline: dict | None) -> dict[str, dict]:
    """Pair recall differences on the same gold triples (resampled together, per triple): this run's
    extractors against each other, and each against the baseline file's extractor of the same name."""
    pairs = {f"{a} - {b}": (runs[a]["found"], runs[b]["found"]) for a in runs for b in runs if a > b}
    if baseline:
        n = len(next(iter(runs.values()))["found"])
        if any(len(r.get("found", [])) != n for r in baseline["extractors"].values()):
            raise SystemExit("baseline: not the same gold triples; compare runs of the same --config and --limit")
        pairs |= {f"{n} - baseline": (runs[n]["found"], baseline["extractors"][n]["found"]) for n in runs if n in baseline["extractors"]}
    out = {}
    for name, (a, b) in pairs.items():
        diff = paired_difference(a, b)
        out[name] = {"pair_recall": round(diff.value, 4), "ci": diff.to_list()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/2wiki.yaml")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--limit", type=int, default=30, help="questions (their gold passages are extracted)")
    parser.add_argument("--extractors", nargs="+", default=["spacy", "llm"])
    parser.add_argument("--out", default="")
    parser.add_argument("--baseline", default="", help="an earlier output of this script (same --config, --limit): paired differences")
    args = parser.parse_args()
    config, ev = load_eval(args.params, args.config)
    rows = [json.loads(line) for line in Path(ev.questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[: args.limit]
    passages, triples = gold_passages(rows)
    llm = make_llm(config.llm) if "llm" in args.extractors else None
    result: dict[str, Any] = {
        "dataset": ev.dataset,
        "questions": len(rows),
        "chunks": len(passages),
        "gold_triples": len(triples),
        "reader": model_name(config.llm),
        "extractors": {},
    }
    out = Path(args.out or f"bench_results/extraction_{ev.dataset}.json")
    facts: list[dict[str, str]] = []  # every named fact with its sentence: what python -m benchmarks judge_facts samples
    for name in args.extractors:
        extractor = make_extractor(config.extraction, name, lambda: llm, fact_prompt)
        seconds, edges = [], []
        for chunk in tqdm(passages, desc=f"extracting ({name})", unit="chunk"):
            start = time.perf_counter()
            extraction = extractor.extract([chunk])
            seconds.append(time.perf_counter() - start)
            edges += graph_tables(extraction, titled=[chunk]).edges.to_pylist()
        named = [e for e in edges if e["relation"] not in STRUCTURAL_RELATIONS]  # not co-occurrence or title->mention
        facts += [
            {"extractor": name, "chunk": e["chunk_id"], "evidence": e["evidence"]} | fact(e["src_name"], e["relation"], e["dst_name"])
            for e in named
        ]
        found = recall(edges, triples)
        result["extractors"][name] = found | {
            "pair_recall": round(found["pair"] / len(triples), 4),
            "with_relation_recall": round(found["with_relation"] / len(triples), 4),
            "named_relation_recall": round(recall(named, triples)["pair"] / len(triples), 4),
            "facts": len(edges),
            "named_facts": len(named),
            "seconds_per_chunk_p50": round(statistics.median(seconds), 3),
            "seconds_total": round(sum(seconds), 1),
            "unparsed_replies": getattr(extractor, "unparsed", None),
        }
    result["paired"] = _paired(result["extractors"], json.loads(Path(args.baseline).read_text()) if args.baseline else None)
    result["baseline"] = args.baseline
    table = Table(title=f"gold-triple recall on {ev.dataset}: {len(rows)} questions, {len(passages)} gold passages, {len(triples)} triples")
    for col in ("extractor", "pair recall", "with relation", "named facts only", "facts", "s/chunk p50"):
        table.add_column(col, justify="left" if col == "extractor" else "right")
    for name, r in result["extractors"].items():
        table.add_row(
            name,
            f"{r['pair_recall']} ({r['pair']}/{r['gold']})",
            str(r["with_relation_recall"]),
            str(r["named_relation_recall"]),
            str(r["facts"]),
            str(r["seconds_per_chunk_p50"]),
        )
    Console().print(table)
    for name, diff in result["paired"].items():
        print(f"pair recall {name}: {diff['pair_recall']:+.3f} [{diff['ci'][0]:+.3f}, {diff['ci'][1]:+.3f}] (paired over gold triples)")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    facts_file = facts_path(out)
    facts_file.write_text("".join(json.dumps(f, ensure_ascii=False) + "\n" for f in facts), encoding="utf-8")
    print(f"-> {out}, {facts_file}")


def fact(subject: str, relation: str, obj: str) -> dict[str, str]:
    return {"subject": subject, "relation": relation, "object": obj}


def facts_path(out: Path) -> Path:
    return out.with_name(f"{out.stem}_facts.jsonl")


if __name__ == "__main__":
    main()
