"""The store and index calls a question makes, by the tool that made them: DuckDB reads of the graph
(`GraphStore`), passage lookups (`PassageStore`) and txtai searches (corpus index, graph index).

The reader is a stub whose perplexity falls each read (10, 5, 2.5, ...), so every question takes
`agent.max_iterations` iterations of one round and the counts do not depend on a model's answers.

    python -m benchmarks store_calls --config configs/hotpotqa.yaml --limit 20 --out bench_results/store_calls.json
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from enrich_rag.agent.trace import Decided, Read, StepKind, Trace
from enrich_rag.llm.base import Generation
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.passages import PassageStore

STORE_READS = {
    GraphStore: (
        "node",
        "nodes_by_ids",
        "find_nodes",
        "neighbors",
        "neighbourhood",
        "edges_by_ids",
        "links",
        "covered_chunks",
        "chunks_read_by",
    ),
    PassageStore: ("by_ids", "by_doc_ids", "containing", "titles", "get"),
}


class FallingReader:
    """A stand-in reader: answers "x" with a perplexity that halves on every call."""

    name = "falling"

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, prompt: Any, max_new_tokens: int = 24, stop: Sequence[str] = ("\n",)) -> Generation:
        self.calls += 1
        return Generation("x", [-math.log(10.0 / 2 ** (self.calls - 1))])

    def score(self, prompt: Any, continuation: str) -> list[float]:
        return [-1.0]


class CallCounter:
    """Counts calls as (tool, call) pairs while installed; `searches` splits txtai searches by index."""

    def __init__(self, indexes: dict[str, Any]):
        self.indexes = indexes  # name -> txtai Embeddings object
        self.tool = "-"
        self.calls: Counter[tuple[str, str]] = Counter()

    def _counted(self, name: str, real: Any) -> Any:
        @functools.wraps(real)
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[(self.tool, name)] += 1
            return real(*args, **kwargs)

        return call

    @contextlib.contextmanager
    def installed(self) -> Iterator[CallCounter]:
        from txtai import Embeddings

        counter, real_step, real_search = self, Trace.step, Embeddings.search

        @contextlib.contextmanager
        def step(trace: Trace, tool: StepKind, **inputs: Any) -> Iterator[Any]:
            outer, counter.tool = counter.tool, tool
            try:
                with real_step(trace, tool, **inputs) as opened:
                    yield opened
            finally:
                counter.tool = outer

        def search(index: Any, *args: Any, **kwargs: Any) -> Any:
            # The project's indexes wrap txtai's (index/embeddings.py's SerializedIndex).
            name = next((n for n, i in counter.indexes.items() if getattr(i, "_embeddings", i) is index), "other index")
            counter.calls[(counter.tool, f"{name} search")] += 1
            return real_search(index, *args, **kwargs)

        with contextlib.ExitStack() as stack:
            for cls, names in STORE_READS.items():
                for name in [n for n in names if hasattr(cls, n)]:
                    real = getattr(cls, name)
                    setattr(cls, name, self._counted(f"{cls.__name__}.{name}", real))
                    stack.callback(setattr, cls, name, real)
            Trace.step = step  # type: ignore[method-assign, assignment]
            stack.callback(setattr, Trace, "step", real_step)
            Embeddings.search = search  # type: ignore[method-assign]
            stack.callback(setattr, Embeddings, "search", real_search)
            yield self

    def by_tool(self) -> dict[str, dict[str, int]]:
        tools: dict[str, dict[str, int]] = {}
        for (tool, call), n in sorted(self.calls.items()):
            tools.setdefault(tool, {})[call] = n
        return tools


def main() -> int:
    from enrich_rag.api import EnrichRAG
    from enrich_rag.eval.prepare import sampled_questions
    from enrich_rag.eval.runner import ensure_built, load_eval

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    config, ev = load_eval(args.params, args.config)
    ensure_built(config, ev)
    items = sampled_questions(ev)[: args.limit]
    totals: Counter[tuple[str, str]] = Counter()
    rounds = iterations = 0
    with EnrichRAG(config, llm=FallingReader(), reconcile=False) as session:  # type: ignore[arg-type]
        resources = session.resources
        session.ask(items[0].question, enrich="never")  # loads models and indexes outside the count
        counter = CallCounter({"corpus index": resources.corpus_index, "graph index": resources.graph_index})
        for item in items:
            session.resources.llm.calls = 0  # type: ignore[attr-defined]
            with counter.installed():
                answer = session.ask(item.question, enrich="never")
            rounds += len(answer.trace.records(Decided))
            iterations += len(answer.trace.records(Read))
        totals = counter.calls
    per_round = {f"{tool} | {call}": round(n / rounds, 2) for (tool, call), n in sorted(totals.items())}
    result = {
        "config": args.config,
        "questions": len(items),
        "rounds": rounds,
        "iterations_per_round": round(iterations / rounds, 2),
        "per_round": per_round,
        "store_reads_per_round": round(sum(n for (_, c), n in totals.items() if "Store." in c) / rounds, 2),
        "graph_store_reads_per_round": round(sum(n for (_, c), n in totals.items() if c.startswith("GraphStore.")) / rounds, 2),
        "index_searches_per_round": round(sum(n for (_, c), n in totals.items() if c.endswith("search")) / rounds, 2),
    }
    table = Table(title=f"store and index calls per round ({len(items)} questions, {result['iterations_per_round']} iterations a round)")
    table.add_column("tool | call")
    table.add_column("per round", justify="right")
    for key, value in per_round.items():
        table.add_row(key, f"{value:g}")
    Console().print(table)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0
