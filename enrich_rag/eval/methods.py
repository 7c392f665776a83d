"""The methods compared side by side, all on the same embedder, LLM and corpus.

Each returns a `Prediction`: the answer, the passages (doc ids, best first) the generator saw, and
the cost counters the table reports. Agent methods differ only in config switches, so an ablation
is one line in `AGENT_METHODS`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.agent.answer import NEVER, NOW, Answer
from enrich_rag.agent.confidence import confidence_summary
from enrich_rag.agent.plan import Plan
from enrich_rag.agent.trace import ContextBuilt, Enriched, Planned, Ranked, Read, Trace
from enrich_rag.api import EnrichRAG
from enrich_rag.errors import ConfigError
from enrich_rag.eval.datasets import QAItem
from enrich_rag.eval.ircot import ircot
from enrich_rag.eval.metrics import exact_match
from enrich_rag.index.embeddings import search
from enrich_rag.llm.base import LLM, Generation, TokenCount
from enrich_rag.llm.comparison import compare, parse_comparison
from enrich_rag.llm.reader import read
from enrich_rag.resources import Resources
from enrich_rag.storage.passages import PassageStore

RETRIEVED = 10  # passages kept per question for recall@k / precision@k up to k = 10


@dataclass
class Prediction:
    answer: str
    docs: list[str]  # retrieved passages (doc ids), best first
    context: list[str] = field(default_factory=list)  # what the generator read (for the judge)
    llm_calls: int = 0
    enrich_rounds: int = 0
    partitions: list[str] = field(default_factory=list)
    seconds: float = 0.0
    trace: dict[str, Any] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)  # prefill, cached and generated tokens, where the backend counts them
    read: list[str] = field(default_factory=list)  # the documents of every passage handed to the reader, in order


class CountingLLM:
    """Counts generate/score calls of any backend: the table's "LLM calls" column."""

    def __init__(self, llm: LLM):
        self.inner, self.calls, self.name = llm, 0, getattr(llm, "name", "llm")

    def generate(self, prompt, max_new_tokens: int = 24, stop: Sequence[str] = ("\n",)) -> Generation:
        self.calls += 1
        return self.inner.generate(prompt, max_new_tokens=max_new_tokens, stop=stop)

    def score(self, prompt, continuation: str) -> list[float]:
        self.calls += 1
        return self.inner.score(prompt, continuation)

    def __getattr__(self, name: str):
        """What else the backend offers (`generate_json` for the deep extractor's schema) passes through, counted."""
        if name == "inner":
            raise AttributeError(name)
        inner = getattr(self.inner, name)
        if name != "generate_json":
            return inner

        def counted(*args, **kwargs):
            self.calls += 1
            return inner(*args, **kwargs)

        return counted


# name -> (allow EnrichGraph, evidence overrides): the full loop and its ablations.
ENTITY_FIRST = {"selection": "entity_first"}
# name -> agent overrides, for the methods that change how the loop runs rather than what it reads. The
# context ablations compare ways of choosing one context, so they read the question as one (`hops` off).
ONE_READ = {"hops": False, "first_read": 0}
AGENT_OVERRIDES: dict[str, dict[str, Any]] = {
    "enrichrag_random": {"enrich_targets": "random"},
    "enrichrag_beyond": {"enrich_targets": "beyond_context"},
    "enrichrag_single": ONE_READ,
    "enrichrag_no_bridge": {"bridge_check": False},
    "enrichrag_read_first": {"plan_when": "unsure", "grow": "unstated", "first_read": 0},
    "enrichrag_plan_first": {"plan_when": "always"},
    "enrichrag_landed": {"plan_when": "always", "first_read": 0},
    "graph_only": ONE_READ,
    "pcst_no_facts": ONE_READ,
    "entity_first": ONE_READ,
    "ef_no_graph": ONE_READ,
    "ef_no_micro_queries": ONE_READ,
    "ef_no_bridges": ONE_READ,
    "ef_llm_rerank": ONE_READ,
}
AGENT_METHODS: dict[str, tuple[bool, dict[str, Any]]] = {
    "graph_only": (False, {"selection": "pagerank"}),  # PageRank passages alone, growing as the tree does; no enrichment
    "enrichrag_no_enrich": (
        False,
        {},
    ),  # the hop loop: a planned question read one sub-question at a time
    "enrichrag": (True, {}),
    "enrichrag_single": (False, {}),  # the whole question read at once (the loop before plans): the ablation
    "enrichrag_no_bridge": (False, {}),  # the hop loop without the bridge check on questions kept whole: its ablation
    "enrichrag_read_first": (False, {}),  # the tree's read first (not the search's), plan only when it does not state its answer
    "enrichrag_plan_first": (False, {}),  # a Plan call before the search's first read (`plan_when: always`)
    "enrichrag_landed": (False, {}),  # plan first and read the tree (`first_read: 0`): the loop before the search's first read
    "enrichrag_random": (True, {}),  # the control: as many random unread chunks from the question's own corpus hits
    "enrichrag_beyond": (True, {}),  # deep-reads the question's top passages the reader did not already read whole
    "pcst_no_facts": (False, {"fact_lines": False}),  # the tree's passages without its fact lines
    "entity_first": (False, ENTITY_FIRST),  # SEAL-RAG's fixed k passages instead of the tree: the ablation
    "ef_no_graph": (False, ENTITY_FIRST | {"graph": False}),  # entity-first without any graph input: the graph's share
    "ef_no_micro_queries": (False, ENTITY_FIRST | {"micro_queries": False}),
    "ef_no_bridges": (False, ENTITY_FIRST | {"bridges": False}),
    "ef_llm_rerank": (False, ENTITY_FIRST | {"rerank": "llm"}),
}
# oracle: the gold passages alone, read with the project's prompt: the reader's ceiling. oracle_hops: MuSiQue's
# gold chain read hop by hop, each over its own gold paragraph: the ceiling of hop reading. ircot: IRCoT.
BASELINES = ("no_retrieval", "naive_rag", "hybrid_rag", "oracle", "oracle_hops", "ircot")
METHODS = (*BASELINES, *AGENT_METHODS)


def _dedupe(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def read_answer(llm: LLM, question: str, passages: list[str], max_new_tokens: int) -> str:
    """The baselines' reader: the answer prompt over these passages (none: the model alone), date
    comparisons read a side at a time as the agent reads them (llm/comparison.py)."""
    answer = read(llm, question, passages, max_new_tokens=max_new_tokens).text.strip()
    comparison = parse_comparison(question) if passages else None
    return (compare(llm, comparison, passages, max_new_tokens=max_new_tokens).answer or answer) if comparison else answer


def rag_baseline(resources: Resources, llm: CountingLLM, question: str, hybrid: bool | None) -> Prediction:
    """hybrid None: no retrieval at all (the LLM alone)."""
    config = resources.config
    if hybrid is None:
        return Prediction(read_answer(llm, question, [], max_new_tokens=config.llm.max_new_tokens), [])
    embeddings = dataclasses.replace(config.embeddings, hybrid=hybrid)
    hits = search(resources.corpus_index, question, RETRIEVED * 2, config=embeddings, columns=("text", "doc_id"))
    passages = [h["text"] for h in hits[: config.retrieval.top_k]]
    answer = read_answer(llm, question, passages, max_new_tokens=config.llm.max_new_tokens)
    read_docs = _dedupe([h["doc_id"] for h in hits[: config.retrieval.top_k]])
    return Prediction(answer, _dedupe([h["doc_id"] for h in hits])[:RETRIEVED], passages, read=read_docs)


def oracle(resources: Resources, llm: CountingLLM, item: QAItem) -> Prediction:
    """The reader's ceiling: every chunk of the gold documents, the project's answer prompt."""
    passages = resources.passages.by_doc_ids(list(item.gold_docs))
    texts, docs = [p.content for p in passages], _dedupe([p.doc_id for p in passages])
    return Prediction(read_answer(llm, item.question, texts, max_new_tokens=resources.config.llm.max_new_tokens), docs, texts, read=docs)


def oracle_hops(resources: Resources, llm: CountingLLM, item: QAItem) -> Prediction:
    """Each gold hop's question, its slots filled with the reader's own earlier answers, read over that
    hop's gold paragraph alone; the last hop's answer. A question without a gold chain is read as `oracle`."""
    if not item.hops:
        return oracle(resources, llm, item)
    chain = Plan(tuple(q for q, _, _ in item.hops))
    answers: list[str] = []
    hops, texts = [], []
    for i, (_, gold, doc) in enumerate(item.hops):
        question = chain.filled(i, answers)
        read_here = [p.content for p in resources.passages.by_doc_ids([doc])]
        answers.append(read_answer(llm, question, read_here, max_new_tokens=resources.config.llm.max_new_tokens))
        texts += read_here
        hops.append({"hop": i + 1, "question": question, "answer": answers[-1], "gold": gold, "em": exact_match(answers[-1], [gold])})
    docs = _dedupe([doc for _, _, doc in item.hops])
    return Prediction(answers[-1], docs, texts, trace={"hops": hops}, read=docs)


def ircot_method(resources: Resources, llm: CountingLLM, question: str) -> Prediction:
    """IRCoT (eval/ircot.py) over the corpus index the loop searches, with its reader."""
    config = resources.config

    def hybrid(query: str, k: int) -> list[tuple[str, str]]:
        return [
            (h["doc_id"], h["text"]) for h in search(resources.corpus_index, query, k, config=config.embeddings, columns=("text", "doc_id"))
        ]

    run = ircot(llm, hybrid, question)
    texts = [text for _, text in run.paragraphs]
    answer = run.answer or read_answer(llm, question, texts, max_new_tokens=config.llm.max_new_tokens)
    docs = _dedupe([doc for doc, _ in run.paragraphs])
    return Prediction(answer, docs[:RETRIEVED], texts, trace={"thoughts": run.thoughts}, read=docs)


def agent_method(session: EnrichRAG, name: str) -> Callable[[QAItem], Prediction]:
    allow, overrides = AGENT_METHODS[name]
    config = session.config
    settings = dataclasses.replace(config.agent, **AGENT_OVERRIDES.get(name, {})), dataclasses.replace(config.evidence, **overrides)
    when = NOW if allow else NEVER  # the design's loop: a method that enriches reads what its round found
    return lambda item: prediction_of(session.ask(item.question, enrich=when, settings=settings), session.resources.passages)


def prediction_of(answer: Answer, passages: PassageStore) -> Prediction:
    """An agent's answer as an evaluation row keeps it; its trace summary holds what the confidence
    features read (`confidence.features_of`), so a model fitted on rows sees what the loop sees serving."""
    trace = answer.trace
    contexts, reads = trace.records(ContextBuilt), trace.records(Read)
    plan = trace.first(Planned)
    summary = (
        confidence_summary(answer.perplexity, trace, answer.chain)
        | {
            "tools": trace.step_names(),
            "sure": answer.sure,
            "confidence": answer.confidence,
            "chunk_ids": [c.chunk_id for c in answer.citations],
            "iterations": len(reads),
            "iteration_seconds": [round(s.seconds, 3) for s in trace.steps if isinstance(s.record, Read)],
            "fact_lines": contexts[-1].fact_lines if contexts else 0,
            "plan": plan.to_dict() if plan else None,
        }
        | _graph_record(trace)
    )
    docs = _dedupe([c.doc_id for c in answer.citations if c.doc_id])[:RETRIEVED]
    rounds = len(trace.records(Enriched))
    read_chunks = _dedupe([c for context in contexts for c in context.chunk_ids])
    found = {p.id: p.doc_id for p in passages.by_ids(read_chunks)}
    return Prediction(
        answer.answer.strip(),
        docs,
        [c.evidence for c in answer.citations],
        enrich_rounds=rounds,
        partitions=list(trace.partitions_written),
        trace=summary | {"read_chunks": read_chunks},
        read=_dedupe([found[c] for c in read_chunks if c in found]),
    )


def _graph_record(trace: Trace) -> dict[str, Any]:
    """What the graph did for one question: PageRank's top passages per round, the selection, and each
    enrichment's new chunks and partition, so an enrichment's effect can be traced per question."""
    enrichments = [
        {
            "new_chunks": s.record.result.new_chunks,
            "unread_candidates": s.record.result.unread_candidates,
            "partition": s.record.result.partition,
        }
        | {"seconds": s.seconds, "extraction_s": s.record.to_dict()["seconds"].get("extraction")}
        for s in trace.steps
        if isinstance(s.record, Enriched)
    ]
    return {"pagerank_top": [r.top_chunk_ids for r in trace.records(Ranked)], "enrichments": enrichments}


def make_method(name: str, session: EnrichRAG, llm: CountingLLM) -> Callable[[QAItem], Prediction]:
    if name not in METHODS:
        raise ConfigError(f"unknown method '{name}' (expected one of: {', '.join(METHODS)})")
    resources = session.resources
    if name in AGENT_METHODS:
        run = agent_method(session, name)
    elif name == "oracle":
        run = lambda item: oracle(resources, llm, item)  # noqa: E731
    elif name == "oracle_hops":
        run = lambda item: oracle_hops(resources, llm, item)  # noqa: E731
    elif name == "ircot":
        run = lambda item: ircot_method(resources, llm, item.question)  # noqa: E731
    else:
        hybrid = {"no_retrieval": None, "naive_rag": False, "hybrid_rag": True}[name]
        run = lambda item: rag_baseline(resources, llm, item.question, hybrid=hybrid)  # noqa: E731
    return timed(llm, run)


def timed(llm: CountingLLM, run: Callable[[QAItem], Prediction]) -> Callable[[QAItem], Prediction]:
    """A method whose every prediction carries its own seconds, reader calls and tokens (the reader is
    shared across methods, so each reads off the difference it made)."""

    def measured(item: QAItem) -> Prediction:
        counted: TokenCount | None = getattr(llm.inner, "tokens", None)
        tokens_before = counted.copy() if counted is not None else None
        calls, start = llm.calls, time.perf_counter()
        prediction = run(item)
        prediction.seconds, prediction.llm_calls = time.perf_counter() - start, llm.calls - calls
        if counted is not None and tokens_before is not None:
            prediction.tokens = counted.since(tokens_before)
        return prediction

    return measured
