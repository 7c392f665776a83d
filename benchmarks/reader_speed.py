"""How fast the default reader computes a prompt and writes an answer on this machine, by thread count,
and what that means for the fast-answer targets.

Per `--threads` count: the reader as configured (llama.cpp, the shipped GGUF) reads `--prompts` prompts of
fresh text (about `--words` words each, so the prompt cache serves none of it) and writes up to 16 tokens;
llama.cpp's own timings give prompt tokens per second (prefill) and generated tokens per second. Then,
for each set of a latency result (`--latency`: its mean prefill and generated tokens per question), the
reader's seconds per question at the fastest thread count's rates against the measured p50, and the
reader speed-up a p50 target needs when the rest of the question's time stays as it is.

    python -m benchmarks reader_speed --latency bench_results/fast_answer_latency_compare_one_read.json \\
        --out bench_results/reader_speed.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import statistics
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.config import load_config
from enrich_rag.llm.factory import make_llm
from enrich_rag.storage.atomic import atomic_file

ROOT = Path(__file__).resolve().parents[1]
TARGET_P50_S = {"nq": 3.0, "hotpotqa": 5.0, "musique": 6.0}  # the fast-answer issue's targets


def rates(llm: Any, prompts: int, words: int, seed: int) -> dict[str, float]:
    """Median prompt and generation tokens per second over `prompts` fresh prompts."""
    vocabulary = (ROOT / "README.md").read_text(encoding="utf-8").split()
    prefill, generation, prompt_tokens = [], [], []
    for n in range(prompts + 1):  # the first request also pays one-time set-up: not counted
        text = " ".join(random.Random(seed + n).choices(vocabulary, k=words))
        reply = llm.server.handle_completions(
            {"prompt": f"{n}: {text}\nQuestion: What is this about?\nAnswer:", "max_tokens": 16, "temperature": 0, "cache_prompt": False}
        )
        timings = reply["timings"]
        if n:
            prefill.append(timings["prompt_per_second"])
            generation.append(timings["predicted_per_second"])
            prompt_tokens.append(timings["prompt_n"])
    return {
        "prompt_tokens": round(statistics.median(prompt_tokens)),
        "prefill_tok_s": round(statistics.median(prefill), 1),
        "generation_tok_s": round(statistics.median(generation), 1),
    }


def targets(latency: dict[str, Any], prefill_tok_s: float, generation_tok_s: float) -> dict[str, Any]:
    """Per set: reader seconds at these rates (mean tokens), and the reader speed-up its p50 target needs."""
    out = {}
    for name, entry in latency["sets"].items():
        every = entry["all"]
        reader_s = every["prefill_tokens_mean"] / prefill_tok_s + every["generated_tokens_mean"] / generation_tok_s
        rest_s = max(0.0, every["p50_s"] - reader_s)
        row = {"p50_s": every["p50_s"], "llm_calls_mean": every["llm_calls_mean"]}
        row |= {"reader_s": round(reader_s, 2), "rest_s": round(rest_s, 2)}
        if (target := TARGET_P50_S.get(name)) is not None:
            row["target_p50_s"] = target
            row["reader_speedup_needed"] = round(reader_s / (target - rest_s), 2) if target > rest_s else None
        out[name] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--prompts", type=int, default=5)
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--latency", type=Path, help="a latency result (sets -> all -> p50_s and tokens)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    config = load_config(ROOT / "params.yaml")
    by_threads = {}
    for threads in args.threads:
        llm = make_llm(dataclasses.replace(config.llm, threads=threads))
        by_threads[threads] = rates(llm, args.prompts, args.words, seed=threads)
        del llm
    best = max(by_threads.values(), key=lambda r: r["prefill_tok_s"])
    result: dict[str, Any] = {"reader": config.llm.model, "cores": os.cpu_count(), "by_threads": by_threads}
    table = Table(title=f"reader speed: {config.llm.model}, {os.cpu_count()} cores")
    for column in ("threads", "prompt tokens", "prefill tok/s", "generation tok/s"):
        table.add_column(column)
    for threads, r in by_threads.items():
        table.add_row(str(threads), str(r["prompt_tokens"]), str(r["prefill_tok_s"]), str(r["generation_tok_s"]))
    Console().print(table)
    if args.latency:
        latency = json.loads(args.latency.read_text(encoding="utf-8"))
        result["latency"] = str(args.latency)
        result["sets"] = sets = targets(latency, best["prefill_tok_s"], best["generation_tok_s"])
        speeds = f"{best['prefill_tok_s']} / {best['generation_tok_s']} tok/s"
        table = Table(title=f"reader seconds per question at {speeds} ({args.latency.name})")
        for column in ("set", "p50 s", "reader calls", "reader s", "rest s", "target p50 s", "reader speed-up needed"):
            table.add_column(column)
        for name, row in sets.items():
            cells = [row[k] for k in ("p50_s", "llm_calls_mean", "reader_s", "rest_s")]
            table.add_row(name, *map(str, cells), str(row.get("target_p50_s", "-")), str(row.get("reader_speedup_needed", "-")))
        Console().print(table)
    with atomic_file(ROOT / args.out) as tmp:
        tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
