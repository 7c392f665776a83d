"""Tool 4, EnrichGraph: find what the graph lacks in the corpus, extract it, and persist it.

Order of writes, each atomic: (1) the new partition (its nodes folder rename is the commit point),
(2) the graph index upsert + save, (3) the DVC record. A crash after (1) leaves a committed
partition that `recovery.reconcile` upserts and records on the next start; a crash before (1)
leaves only a hidden staging folder that is removed.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from enrich_rag.agent.enrich_context import content_words
from enrich_rag.build.corpus import chunks_by_ids
from enrich_rag.build.seed_graph import write_graph_partition
from enrich_rag.errors import StorageError
from enrich_rag.extract.base import ChunkInput
from enrich_rag.index.embeddings import search
from enrich_rag.index.graph_index import upsert_partition
from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import expansion_prompt
from enrich_rag.storage.partitions import committed_partitions, partition_dir

MAX_QUERY_WORDS = 12
SEARCH_FANOUT = 5  # corpus hits looked at per chunk wanted
_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|the|de|von|van|and)?\s*[A-Z][\w'’.-]*)*")


@dataclass
class EnrichResult:
    expansion_query: str
    query_source: str  # llm | template
    searched: list[str] = field(default_factory=list)
    new_chunks: list[str] = field(default_factory=list)
    partition: str | None = None
    nodes: int = 0
    edges: int = 0
    indexed: int = 0
    dvc: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def gap_query(question: str, facts: list[str]) -> str:
    """Template fallback: the question's names that the current evidence never mentions."""
    known = content_words(" ".join(facts))
    names = [m.group(0).strip() for m in _CAPITALISED.finditer(question)]
    missing = [n for n in names if not content_words(n) <= known and content_words(n)]
    return " ".join(dict.fromkeys(missing)) or question


def expansion_query(llm: LLM | None, question: str, facts: list[str]) -> tuple[str, str]:
    if llm is not None:
        text = llm.generate(expansion_prompt(question, facts), max_new_tokens=16).text
        words = text.split()
        if 0 < len(words) <= MAX_QUERY_WORDS and content_words(text) and text.casefold() != question.casefold():
            return text, "llm"
    return gap_query(question, facts), "template"


def new_partition_id(graph_root: Path) -> str:
    n = sum(p.startswith("enrich-") for p in committed_partitions(graph_root)) + 1
    return f"enrich-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%f}-{n}"


def enrich_graph(question: str, facts: list[str], resources, limit_chunks: int) -> EnrichResult:
    """`resources` is the agent's `Resources` (store, indexes, extractor, llm, dvc, config)."""
    config = resources.config
    if not resources.dvc.exists():
        # Checked before anything is written: an enrichment DVC cannot record is not made at all.
        raise StorageError(f"no DVC repository at {resources.dvc.root}; run `dvc init` there (or set paths.dvc_root)")
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    query, source = expansion_query(resources.llm if config.agent.expansion == "llm" else None, question, facts)
    timings["expansion_query"] = time.perf_counter() - t0
    result = EnrichResult(query, source)

    t0 = time.perf_counter()
    hits = search(resources.corpus_index, query, limit_chunks * SEARCH_FANOUT, config.embeddings, columns=("title",))
    result.searched = [h["id"] for h in hits]
    covered = resources.store.covered_chunks(result.searched)
    result.new_chunks = [cid for cid in result.searched if cid not in covered][:limit_chunks]
    timings["corpus_search"] = time.perf_counter() - t0
    if not result.new_chunks:
        result.seconds = timings
        return result

    t0 = time.perf_counter()
    rows = chunks_by_ids(config.paths.chunks, result.new_chunks)
    extraction = resources.extractor.extract([ChunkInput(r["chunk_id"], r["doc_id"], r["title"], r["text"]) for r in rows])
    timings["extraction"] = time.perf_counter() - t0

    graph_root = Path(config.paths.graph)
    with resources.write_lock():
        t0 = time.perf_counter()
        partition = new_partition_id(graph_root)
        nodes, edges = write_graph_partition(graph_root, partition, extraction)
        result.partition, result.nodes, result.edges = partition, nodes.num_rows, edges.num_rows
        timings["write_partition"] = time.perf_counter() - t0
        resources.after_partition_write(partition)  # fault-injection seam for tests

        t0 = time.perf_counter()
        result.indexed = upsert_partition(resources.graph_index, resources.store, partition, config.paths.graph_index)
        timings["upsert"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        result.dvc = resources.dvc.record(
            [partition_dir(graph_root, "nodes", partition), partition_dir(graph_root, "edges", partition),
             Path(config.paths.graph_index)]
        )
        timings["dvc"] = time.perf_counter() - t0
    result.seconds = timings
    return result
