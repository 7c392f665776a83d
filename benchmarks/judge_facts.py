"""Precision of deep-extracted facts: the reader model judges each fact against its own sentence.

Samples (seeded) `--facts` facts of one extractor from the facts file `eval_extraction.py` writes, and
asks the judge "Does the sentence state this fact?" (P(Yes) from log-probs, as `eval/judge.py`). A
small judge says Yes too easily, so it is calibrated on the same dataset's gold: 2WikiMultihopQA's
evidence triples with the gold passage's sentence naming both ends (true), and the same triples
corrupted (false: the object swapped for another triple's, or the relation for another of no shared
word). A fact counts as judged true at a P(yes) cut chosen on those sets (max TPR - FPR; the answer
judge's 0.5 is reported beside it), and the judge's rates there (TPR, FPR) correct the raw yes-rate
(Rogan-Gladen): precision = (yes - FPR) / (TPR - FPR), clipped to [0, 1]; the interval resamples
all three sets (the cut held fixed).

    python -m benchmarks eval_extraction --config configs/2wiki.yaml --limit 30   # writes the facts file
    python -m benchmarks judge_facts --config configs/2wiki.yaml --facts-file bench_results/extraction_2wiki_facts.jsonl
    # -> table + bench_results/judged_facts_2wiki.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.eval_extraction import fact, gold_passages
from enrich_rag.eval.judge import CORRECT_AT, p_yes
from enrich_rag.eval.runner import load_eval
from enrich_rag.eval.stats import CONFIDENCE
from enrich_rag.extract.llm_extractor import evidence_sentence
from enrich_rag.llm.factory import make_llm
from enrich_rag.llm.models import model_name
from enrich_rag.llm.prompts import fact_judge_prompt
from enrich_rag.text import content_words

RESAMPLES = 2000


def calibration_facts(rows: list[dict], limit: int, seed: int) -> tuple[list[dict], list[dict]]:
    """Gold triples with the sentence that states them (true), and one corruption of each (false)."""
    passages, triples = gold_passages(rows)
    true = []
    for s, r, o in triples:
        sentence = next((x for p in passages if (x := evidence_sentence(f"{p.title}. {p.text}", s, o))), None)
        if sentence:
            true.append({"evidence": sentence} | fact(s, r, o))
    rng = random.Random(seed)
    true = rng.sample(true, min(limit, len(true)))
    false = []
    for i, t in enumerate(true):
        if i % 2:  # another triple's object, not this one's
            others = [x["object"] for x in true if x["object"].casefold() != t["object"].casefold()]
            false.append(t | {"object": rng.choice(others)})
        else:  # another relation that shares no word with this one
            others = [x["relation"] for x in true if not set(content_words(x["relation"])) & set(content_words(t["relation"]))]
            false.append(t | {"relation": rng.choice(others)})
    return true, false


def judged(llm, facts: list[dict], desc: str) -> list[float]:
    return [
        round(p_yes(llm, fact_judge_prompt(f["evidence"], f["subject"], f["relation"], f["object"])), 4)
        for f in tqdm(facts, desc=desc, unit="fact")
    ]


def corrected(yes: float, tpr: float, fpr: float) -> float:
    return float(np.clip((yes - fpr) / (tpr - fpr), 0.0, 1.0)) if tpr > fpr else float("nan")


def precision_interval(sample: list[bool], true: list[bool], false: list[bool], seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(x, dtype=float) for x in (sample, true, false)]
    means = [a[rng.integers(0, len(a), size=(RESAMPLES, len(a)))].mean(axis=1) for a in arrays]
    values = np.array([corrected(y, t, f) for y, t, f in zip(*means)])
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.nanpercentile(values, [tail, 100 - tail])
    return [round(float(low), 4), round(float(high), 4)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/2wiki.yaml")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--facts-file", default="bench_results/extraction_2wiki_facts.jsonl")
    parser.add_argument("--extractor", default="llm")
    parser.add_argument("--facts", type=int, default=50, help="facts sampled (seeded) and judged")
    parser.add_argument("--calibration", type=int, default=40, help="gold triples (and as many corruptions) the judge is calibrated on")
    parser.add_argument("--limit", type=int, default=100, help="dev questions whose gold triples calibrate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scores", default="", help="an earlier output of this script: summarise its verdicts again, no model")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    config, ev = load_eval(args.params, args.config)
    if args.scores:  # the judge's verdicts of an earlier run, summarised again (no model)
        earlier = json.loads(Path(args.scores).read_text(encoding="utf-8"))
        sample, judge = earlier["facts"], earlier["judge"]
        true = [f for f in earlier["calibration_facts"] if f["true"]]
        false = [f for f in earlier["calibration_facts"] if not f["true"]]
        scores = {name: [f["p_yes"] for f in facts] for name, facts in (("sample", sample), ("gold", true), ("corrupted", false))}
    else:
        pool = [json.loads(line) for line in Path(args.facts_file).read_text(encoding="utf-8").splitlines() if line.strip()]
        pool = [f for f in pool if f["extractor"] == args.extractor]
        if len(pool) < args.facts:
            raise SystemExit(f"{args.facts_file}: {len(pool)} facts of extractor {args.extractor!r}, fewer than --facts {args.facts}")
        sample = random.Random(args.seed).sample(pool, args.facts)
        rows = [json.loads(line) for line in Path(ev.questions).read_text(encoding="utf-8").splitlines() if line.strip()][: args.limit]
        true, false = calibration_facts(rows, args.calibration, args.seed)
        llm, judge = make_llm(config.llm), model_name(config.llm)
        scores = {name: judged(llm, facts, name) for name, facts in (("sample", sample), ("gold", true), ("corrupted", false))}
    thresholds = {"answer judge's": CORRECT_AT, "calibrated": youden_threshold(scores["gold"], scores["corrupted"])}
    summaries = {name: summary(scores, t, args.seed) for name, t in thresholds.items()}
    result: dict[str, Any] = {
        "dataset": ev.dataset,
        "facts_file": args.facts_file,
        "extractor": args.extractor,
        "judge": judge,
        "judged_facts": len(sample),
        "calibration_sizes": {"gold": len(true), "corrupted": len(false)},
        "precision": summaries["calibrated"]["precision"],
        "precision_ci": summaries["calibrated"]["precision_ci"],
        "by_threshold": summaries,
        "facts": [{k: v for k, v in f.items() if k != "p_yes"} | {"p_yes": s} for f, s in zip(sample, scores["sample"])],
        "calibration_facts": [
            {k: v for k, v in f.items() if k not in ("true", "p_yes")} | {"true": t, "p_yes": s}
            for t, fs, ss in ((True, true, scores["gold"]), (False, false, scores["corrupted"]))
            for f, s in zip(fs, ss)
        ],
    }
    table = Table(title=f"{args.extractor} facts judged against their sentence by {judge} ({ev.dataset}, {len(sample)} facts)")
    for col in ("P(yes) threshold", "judge says yes", "judge TPR (gold)", "judge FPR (corrupted)", "precision, corrected [95%]"):
        table.add_column(col, justify="right")
    for name, r in summaries.items():
        table.add_row(
            f"{name} {r['threshold']:.3f}",
            f"{r['judged_yes']:.2f}",
            f"{r['tpr']:.2f} of {len(true)}",
            f"{r['fpr']:.2f} of {len(false)}",
            f"{r['precision']:.2f} [{r['precision_ci'][0]:.2f}, {r['precision_ci'][1]:.2f}]",
        )
    Console().print(table)
    out = Path(args.out or f"bench_results/judged_facts_{ev.dataset}.json")
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"-> {out}")


def youden_threshold(true: list[float], false: list[float]) -> float:
    """The P(yes) cut that best separates the calibration's true facts from its false ones (max TPR - FPR);
    chosen on the calibration sets, never on the judged sample."""
    return max(sorted(set(true)), key=lambda t: (np.mean(np.asarray(true) >= t) - np.mean(np.asarray(false) >= t), t))


def summary(scores: dict[str, list[float]], threshold: float, seed: int) -> dict[str, Any]:
    says = {name: [s >= threshold for s in values] for name, values in scores.items()}
    rate = {name: round(sum(v) / len(v), 4) for name, v in says.items()}
    return {
        "threshold": round(threshold, 4),
        "judged_yes": rate["sample"],
        "tpr": rate["gold"],
        "fpr": rate["corrupted"],
        "precision": round(corrected(rate["sample"], rate["gold"], rate["corrupted"]), 4),
        "precision_ci": precision_interval(says["sample"], says["gold"], says["corrupted"], seed),
    }


if __name__ == "__main__":
    main()
