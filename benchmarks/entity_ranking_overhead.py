"""Entity-first ranking overhead (the entity-first ranker spec, context/README.md: < 50 ms per 100 chunks), and the whole selection step.

python -m benchmarks entity_ranking_overhead --out bench_results/entity_ranker.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from enrich_rag.evidence.entity_ranker import EntityFirstRanker

WORDS = "retrieval graph passage entity model corpus index query answer evidence bridge film director".split()


def synthetic_chunks(n: int, entities: list[str], rng: random.Random) -> list[dict]:
    """~800-character passages, a third of them naming one of the entities somewhere."""
    chunks = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(110)]
        if i % 3 == 0:
            words.insert(rng.randrange(len(words)), rng.choice(entities))
        chunks.append({"id": i, "content": " ".join(words), "score": rng.random()})
    return chunks


def timed_ms(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--out", default="bench_results/entity_ranker.json")
    args = parser.parse_args()
    rng = random.Random(0)
    entities = ["SEAL-RAG", "CRAG", "DPR"]
    chunks = synthetic_chunks(args.chunks, entities, rng)
    new = synthetic_chunks(20, entities, rng)
    ranker = EntityFirstRanker()
    rank = timed_ms(lambda: ranker.rank_by_entity_coverage(chunks, entities, top_k=10), args.repeats)
    replace = timed_ms(lambda: ranker.replace_chunks(chunks[:10], new, entities, budget=10), args.repeats)
    result = {
        "chunks": args.chunks,
        "chars_per_chunk": round(statistics.mean(len(c["content"]) for c in chunks)),
        "rank_p50_ms": round(statistics.median(rank), 3),
        "rank_p95_ms": round(sorted(rank)[int(0.95 * len(rank))], 3),
        "replace_10_of_20_p50_ms": round(statistics.median(replace), 3),
        "target_rank_ms": 50,
    }
    table = Table(title=f"entity-first ranking, {args.chunks} chunks, {args.repeats} repeats")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in result.items():
        table.add_row(key, str(value))
    Console().print(table)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
