"""Tool 4, EnrichGraph: find what the graph lacks in the corpus, extract only that, and commit it.

First the gaps the graph can see: passages the question's PageRank and search put on top that the
extractor never read (they are in the graph by their title link alone). Then, for what is left of
the budget, an expansion query from the LLM (a template of the question's unmet names when its
output is unusable) finds more unread chunks in the corpus index. The extractor reads only those;
`GraphWriter.commit` persists facts and links (partition -> index -> DVC), so PageRank re-run on the
same question walks through them, and the next question that needs them finds them already there.

The writes a question leads to run now or later (`Jobs`): an EnrichGraph round, a partition of learned
facts. An answer queues them (`agent.enrich_when: background`); `enrich-rag enrich --pending` and the
server's worker run them here, as the answer that queued them would have."""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from enrich_rag.config import AgentConfig, Config
from enrich_rag.evidence.learned_facts import LEARNED, learned_tables
from enrich_rag.extract.assemble import graph_tables
from enrich_rag.extract.base import Extractor
from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import expansion_prompt
from enrich_rag.resources import Resources
from enrich_rag.storage.enrichment_jobs import LEARN, EnrichmentJob
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.graph_writer import GraphWriter
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge
from enrich_rag.text import content_words

MAX_QUERY_WORDS = 12
SEARCH_FANOUT = 5  # corpus hits looked at per chunk wanted
CONTROL_POOL = 50  # random targeting draws from the question's own top corpus hits
_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|the|de|von|van|and)?\s*[A-Z][\w'’.-]*)*")


@dataclass
class EnrichResult:
    expansion_query: str
    query_source: str  # llm | template (its output unusable) | random (the control) | none (no query needed)
    searched: list[str] = field(default_factory=list)
    unread_candidates: list[str] = field(default_factory=list)  # the structural gaps, read first
    new_chunks: list[str] = field(default_factory=list)
    partition: str | None = None
    nodes: int = 0
    edges: int = 0
    links: int = 0
    indexed: int = 0
    dvc: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    compacted_into: str | None = None  # the partition now holding it, when this commit set off a compaction

    @property
    def grew(self) -> bool:
        """The graph gained rows (a partition may only record chunks read that held nothing)."""
        return bool(self.partition and (self.nodes or self.edges or self.links))

    def record(self) -> dict[str, Any]:
        out = {
            "expansion_query": self.expansion_query,
            "query_source": self.query_source,
            "unread_candidates": self.unread_candidates,
            "new_chunks": self.new_chunks,
            "partition": self.partition,
            "nodes": self.nodes,
            "edges": self.edges,
            "links": self.links,
            "indexed": self.indexed,
            "dvc": self.dvc,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        } | ({"compacted_into": self.compacted_into} if self.compacted_into else {})
        if not self.grew:
            out["reason"] = "nothing new in the chunks read" if self.new_chunks else "no uncovered chunks found"
        return out


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


def already_read(store: GraphStore, chunk_ids: list[str], deep: str = "") -> set[str]:
    """The chunks enrichment need not read again: read by the deep extractor (`deep`), or by any."""
    return store.chunks_read_by(chunk_ids, deep) if deep else store.covered_chunks(chunk_ids)


def random_targets(question: str, corpus: Callable[[str, int], list[Passage]], store: GraphStore, limit: int, deep: str) -> list[Passage]:
    """The control for targeting: unread chunks drawn at random (seeded by the question) from the
    question's own top corpus hits, so they are on topic but not chosen by the graph."""
    hits = corpus(question, CONTROL_POOL)
    read = already_read(store, [p.id for p in hits], deep)
    unread = list({p.id: p for p in hits if p.id not in read}.values())
    rng = random.Random(hashlib.sha1(question.encode("utf-8")).hexdigest())
    return rng.sample(unread, min(limit, len(unread)))


def enrich_graph(
    question: str,
    facts: list[str],
    *,
    corpus: Callable[[str, int], list[Passage]],
    store: GraphStore,
    extractor: Callable[[], Extractor],
    writer: GraphWriter,
    llm: LLM | None,
    limit_chunks: int,
    candidates: Sequence[Passage] = (),
    deep: str = "",
    targets: str = "ranked",
) -> EnrichResult:
    """`facts`: the evidence texts the reader had; `candidates`: the question's top passages, best
    first; `llm` None uses the template query; `extractor` loads on first need. `deep`: the deep
    extractor's name (`llm`): a chunk is unread until it has read it, whatever the seed read there.
    `targets`: `random` reads random unread chunks of the question's corpus hits instead (the control)."""
    writer.require_dvc()
    timings: dict[str, float] = {}
    if targets == "random":
        new = random_targets(question, corpus, store, limit=limit_chunks, deep=deep)
        result = EnrichResult("", "random")
    else:
        read = already_read(store, [p.id for p in candidates], deep)
        new = list({p.id: p for p in candidates if p.id not in read}.values())[:limit_chunks]
        result = EnrichResult("", "none", unread_candidates=[p.id for p in new])
    if len(new) < limit_chunks and targets != "random":
        t0 = time.perf_counter()
        result.expansion_query, result.query_source = expansion_query(llm, question, facts)
        timings["expansion_query"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        hits = corpus(result.expansion_query, limit_chunks * SEARCH_FANOUT)
        result.searched = [p.id for p in hits]
        covered = already_read(store, result.searched, deep) | {p.id for p in new}
        new += [p for p in hits if p.id not in covered][: limit_chunks - len(new)]
        timings["corpus_search"] = time.perf_counter() - t0
    result.new_chunks = [p.id for p in new]
    if not new:
        result.seconds = timings
        return result

    t0 = time.perf_counter()
    extraction = extractor().extract(sorted(new, key=lambda p: p.id))
    tables = graph_tables(extraction)
    if deep:  # the chunks count as read even when they held nothing, so no later question reads them again
        tables = replace(tables, reads={deep: result.new_chunks})
    timings["extraction"] = time.perf_counter() - t0

    commit = writer.commit(tables)
    if commit is None:
        result.seconds = timings  # the chunks held nothing the graph lacks: no partition, no DVC record
        return result
    result.partition, result.nodes, result.edges, result.links = commit.partition, commit.nodes, commit.edges, commit.links
    result.indexed, result.dvc, result.compacted_into = commit.indexed, commit.dvc, commit.compacted
    result.seconds = timings | commit.seconds
    return result


def deep_extractor(config: Config) -> str:
    """The deep extractor's name when it is the LLM: then a chunk the seed read is still unread."""
    return "llm" if config.extraction.deep == "llm" else ""


@dataclass(frozen=True)
class Jobs:
    resources: Resources
    config: AgentConfig

    def enrich(self, question: str, facts: list[str], candidates: Sequence[Passage] = ()) -> EnrichResult:
        """One EnrichGraph round (also `enrich-rag enrich`)."""
        resources = self.resources
        return enrich_graph(
            question,
            facts,
            corpus=resources.retrieval().corpus,
            store=resources.store,
            extractor=lambda: resources.extractor,
            writer=resources.writer,
            llm=resources.llm if self.config.expansion == "llm" else None,
            limit_chunks=self.config.enrich_chunks,
            candidates=candidates,
            deep=deep_extractor(resources.config),
            targets=self.config.enrich_targets,
        )

    def learn(self, facts: Sequence[Edge]) -> dict[str, Any]:
        """Commit learned facts as one `learned-` partition (nothing when the graph holds them all)."""
        commit = self.resources.writer.commit(learned_tables(facts), prefix=LEARNED)
        return {"partition": commit.partition if commit else None, "facts": commit.edges if commit else 0}

    def run(self, job: EnrichmentJob) -> dict[str, Any]:
        """A queued round (or an answer's learned facts), as the answer that queued it would have run it."""
        if job.kind == LEARN:
            return self.learn([Edge.from_row(f) for f in job.learned])
        candidates = self.resources.passages.by_ids(list(job.candidates))
        return self.enrich(job.question, list(job.facts), candidates).record()
