"""Entity-first evidence selection for one question, SEAL-RAG style:

    candidates (corpus top-K + GraphRank's passages) -> hybrid entity-first score -> rerank -> top k
    repeat: gap detection (query entities and bridge entities without a passage about them)
            -> micro-queries on the corpus and graph indexes -> fixed-k replacement
    until nothing is missing, coverage stops improving (diminishing_returns), or the round cap.

A passage is *about* an entity when the entity appears in its title or lead sentence; that, not a
passing mention, is what a second hop needs. With `evidence.selection: pcst` this choice is a prize of
the evidence tree (evidence/enrich_context.py), not the reader's context itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from enrich_rag.config import Config, EvidenceConfig
from enrich_rag.evidence.entity_ranker import EntityFirstRanker
from enrich_rag.evidence.query_analysis import SINGLE_HOP, QueryAnalysis
from enrich_rag.evidence.rerank import Reranker, ranker_view
from enrich_rag.index.embeddings import search
from enrich_rag.index.graph_index import search_graph
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.passages import Passage, PassageStore, normalised
from enrich_rag.text import bare_title, content_words, first_sentence, mentions

LEAD_CHARS = 300
GRAPH_CHUNKS_PER_QUERY = 3
RELEVANCE_POOL_FACTOR = 5  # micro-query hits must be among the question's top K x 5 passages
STEM = 5  # crude stemming for matching relation words: "directed" ~ "director"
# What a second hop can be about; nationalities, dates and numbers are attributes, not hops.
BRIDGE_LABELS = {"PERSON", "ORG", "GPE", "LOC", "FAC", "WORK_OF_ART", "EVENT", "PRODUCT", "LAW"}
View = dict[str, Any]  # a passage as the entity-first ranker reads it: id, title, content (the text), score


@dataclass
class Selection:
    passages: list[Passage]
    record: dict[str, Any] = field(default_factory=dict)  # what the trace shows


@dataclass
class Retrieval:
    """The searches selection may run; functions, so tests and the evaluation can pass their own."""

    corpus: Callable[[str, int], list[Passage]]
    graph: Callable[[str, int], list[Passage]] | None = None


def corpus_retrieval(
    config: Config,
    corpus_index,
    passages: PassageStore,
    store: GraphStore | None = None,
    graph_index=None,
    dense_weight: float | None = None,
) -> Retrieval:
    """`dense_weight`: the corpus hybrid's, where the kind of corpus sets its own (evidence/fusion.py)."""
    corpus_config = config.embeddings if dense_weight is None else replace(config.embeddings, dense_weight=dense_weight)

    def corpus(query: str, limit: int) -> list[Passage]:
        hits = search(corpus_index, query, limit, config=corpus_config, columns=())
        found = {p.id: p for p in passages.by_ids([h["id"] for h in hits])}
        return normalised([found[h["id"]].scored(h["score"]) for h in hits if h["id"] in found])

    def graph(query: str, limit: int) -> list[Passage]:
        """Graph-index hits -> the chunks their facts come from (a node's own passage names it as subject)."""
        hits = search_graph(graph_index, query, limit, config=config.embeddings)
        nodes = [h["id"] for h in hits if h.get("kind") == "node"]
        edge_ids = [h["id"] for h in hits if h.get("kind") == "edge"]
        assert store is not None  # `graph` is only handed out with a store (below)
        chunk_ids = [e["chunk_id"] for e in store.edges_by_ids(edge_ids)]
        chunk_ids += [e["chunk_id"] for e in store.neighbors(nodes, limit=limit * 10) if e["src"] in nodes]
        ranked = list(dict.fromkeys(chunk_ids))[:GRAPH_CHUNKS_PER_QUERY]
        found = {p.id: p for p in passages.by_ids(ranked)}
        return [found[c].scored(1.0 - i / (len(ranked) + 1)) for i, c in enumerate(ranked) if c in found]

    return Retrieval(corpus, graph if graph_index is not None and store is not None else None)


def lead(view: View) -> View:
    """Title + first sentence: the view in which a passage is *about* an entity."""
    return {
        "id": view["id"],
        "title": view["title"],
        "content": first_sentence(view["content"], LEAD_CHARS),
        "score": view.get("score", 0.0),
    }


def about_test(bridges: Sequence[str]) -> Callable[[View, str], bool]:
    """Whether a passage is about an entity: a query entity in its title or lead sentence; a bridge in
    its title only, since a lead may name a bridge ("a 1935 film starring Ginger Rogers") and say
    nothing more about it: the second hop needs the bridge's own passage."""
    bridge_set = set(bridges)

    def about(view: View, entity: str) -> bool:
        if entity in bridge_set:
            return mentions(view["title"], entity)
        first = lead(view)
        return mentions(f"{first['title']} {first['content']}", entity)

    return about


def gaps(chunks: Sequence[View], entities: Sequence[str], bridges: Sequence[str]) -> list[str]:
    about = about_test(bridges)
    return [e for e in dict.fromkeys([*entities, *bridges]) if not any(about(c, e) for c in chunks)]


def find_bridges(chunks: Sequence[View], analysis: QueryAnalysis, nlp, limit: int) -> list[str]:
    """Named entities the question never names, said in a passage about a query entity or in a sentence
    with one: the hop between what is asked and what answers it. Those in a sentence that shares the
    question's relation words ("directed" for "director") come first, then the most frequent."""
    scores: dict[str, tuple[int, int]] = {}
    is_about = about_test(())
    query_words = content_words(" ".join(analysis.entities) + " " + analysis.question)
    hint_stems = {w[:STEM] for w in content_words(analysis.hint)}
    for chunk, doc in zip(chunks, nlp.pipe(c["passage"].content for c in chunks)):
        about = any(is_about(chunk, e) for e in analysis.entities)
        title_words = content_words(chunk["title"])
        for sent in doc.sents:
            if not about and not any(mentions(sent.text, e) for e in analysis.entities):
                continue
            on_topic = int(bool(hint_stems & {w[:STEM] for w in content_words(sent.text)}))
            for ent in sent.ents:
                name = ent.text.strip(" '\"")
                words = content_words(name)
                if ent.label_ not in BRIDGE_LABELS or not words or words & query_words or words <= title_words:
                    continue
                topic, count = scores.get(name, (0, 0))
                scores[name] = (max(topic, on_topic), count + 1)
    return sorted(scores, key=lambda n: (-scores[n][0], -scores[n][1]))[:limit]


def graph_bridges(chunks: Sequence[View], ranked: Sequence[Passage], analysis: QueryAnalysis, limit: int) -> dict[str, Passage]:
    """PageRank's passages whose subject the selection names: hops the graph ranks and the evidence
    points to, named entity or not ("named for the pronghorn"). Name -> its passage, in PageRank order."""
    chosen = {c["id"] for c in chunks}
    found: dict[str, Passage] = {}
    for passage in ranked:
        name = bare_title(passage.title)
        if (
            passage.id in chosen
            or not name
            or name in found
            or any(mentions(passage.title, e) or mentions(e, name) for e in analysis.entities)
        ):
            continue
        if any(mentions(c["content"], name) for c in chunks):
            found[name] = passage
        if len(found) == limit:
            break
    return found


def micro_queries(missing: Sequence[str], bridges: Sequence[str], analysis: QueryAnalysis) -> list[str]:
    """'<entity>', '<entity> <relation hint>', and for a bridge '<bridge> <query entity>'."""
    queries = []
    for entity in missing:
        queries += [entity, f"{entity} {analysis.hint}".strip()]
    for bridge in bridges:
        queries += [bridge, f"{bridge} {analysis.hint}".strip()]
        queries += [f"{bridge} {e}" for e in analysis.entities[:1]]
    return list(dict.fromkeys(queries))


def entity_ranker(cfg: EvidenceConfig) -> EntityFirstRanker:
    return EntityFirstRanker(
        cfg.replacement_threshold,
        cfg.coverage_weight,
        cfg.salience_weight,
        retrieval_weight=cfg.retrieval_weight,
        title_weight=cfg.own_page_weight,
    )


def select_evidence(
    analysis: QueryAnalysis,
    retrieval: Retrieval,
    cfg: EvidenceConfig,
    rerank: Reranker,
    nlp,
    extra: Sequence[Passage] = (),
    hits: Sequence[Passage] | None = None,
) -> Selection:
    """`hits`: the question's own corpus search when the caller already made it (the agent's round makes
    one for PageRank and selection alike); its top K x RELEVANCE_POOL_FACTOR are read."""
    ranker = entity_ranker(cfg)
    # One wide search gives both the top-K candidates and each passage's relevance to the whole question.
    pool_size = cfg.candidates * RELEVANCE_POOL_FACTOR
    wide = normalised(list(hits)[:pool_size]) if hits is not None else retrieval.corpus(analysis.question, pool_size)
    relevance = {p.id: p.score for p in wide}
    pool = {p.id: p for p in wide[: cfg.candidates]}
    for part in analysis.parts:  # comparison: each entity's part gets its own search
        for p in retrieval.corpus(part, cfg.micro_k):
            pool.setdefault(p.id, p)
    for p in extra:  # graph-ranked passages: candidates, and relevant enough to be swapped in
        pool.setdefault(p.id, p)
        relevance.setdefault(p.id, 0.0)
    # The retrieval score is dense relevance to the whole question (below the wide pool: none); the
    # graph speaks through its candidates and its bridges, not by rescaling (measured: mixing PageRank
    # mass into the score lowered all-evidence@2 on HotpotQA).
    pool = {pid: p.scored(relevance[pid]) if pid in relevance else p for pid, p in pool.items()}
    views = {pid: ranker_view(p) for pid, p in pool.items()}
    # Ranked on the lead view: a passage about a query entity beats one that merely mentions it.
    ranked = ranker.rank_by_entity_coverage([lead(v) for v in views.values()], analysis.entities, cfg.candidates)
    candidates = [pool[v["id"]] for v in ranked]
    scores = rerank(analysis.question, candidates, analysis.entities)
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])
    selected = [views[candidates[i].id] for i in order[: cfg.k]]
    record: dict[str, Any] = {**analysis.to_dict(), "candidates": len(pool), "rounds": [], "stop_reason": "micro_queries_off"}
    if not cfg.micro_queries:
        return Selection([v["passage"] for v in selected], record)

    bridges: list[str] = []
    linked: dict[str, Passage] = {}  # bridges the graph ranked, with their passages
    coverage = _coverage(selected, analysis.entities, bridges)
    for round_ in range(cfg.rounds):
        if cfg.bridges and analysis.kind != SINGLE_HOP:
            if cfg.graph_bridges:
                linked = graph_bridges(selected, extra, analysis, limit=cfg.max_bridges) | linked
            named = find_bridges(selected, analysis, nlp, limit=cfg.max_bridges)
            bridges = list(dict.fromkeys([*bridges, *linked, *named]))[: cfg.max_bridges]
        coverage = _coverage(selected, analysis.entities, bridges)  # bridges found this round count too
        targets = gaps(selected, analysis.entities, bridges)
        if not targets:
            record["stop_reason"] = "complete"
            break
        missing = [e for e in targets if e in analysis.entities]
        gap_bridges = [b for b in targets if b not in analysis.entities]
        queries = micro_queries(missing, gap_bridges, analysis)
        found: dict[str, Passage] = {linked[b].id: linked[b] for b in gap_bridges if b in linked}
        for query in queries:
            hits = retrieval.corpus(query, cfg.micro_k) + (retrieval.graph(query, cfg.micro_k) if retrieval.graph else [])
            for p in hits:
                found.setdefault(p.id, p)
        # A passage about a gap is a second hop only if it still bears on the question: "Philadelphia
        # Arrows" covers the bridge "Philadelphia" but not "the address of the penitentiary".
        in_selection = {v["id"] for v in selected}
        new = sorted(
            (ranker_view(p) for p in found.values() if p.id in relevance and p.id not in in_selection), key=lambda v: -relevance[v["id"]]
        )
        # A swap must not orphan a query entity, nor a bridge whose own passage (by title) is already in.
        kept = [e for e in analysis.entities if e not in targets]
        kept += [b for b in bridges if b not in targets]
        ranker.covers = about_test(bridges)
        selected, _ = ranker.replace_chunks(selected, new, targets, budget=cfg.k, keep_entities=kept)
        new_coverage = _coverage(selected, analysis.entities, bridges)
        gain, coverage = new_coverage - coverage, new_coverage
        record["rounds"].append(
            {
                "round": round_,
                "missing": missing,
                "bridges": gap_bridges,
                "micro_queries": queries,
                "swapped_in": [v["id"] for v in selected if v["id"] not in in_selection],
                "coverage": round(new_coverage, 3),
                "gain": round(gain, 3),
            }
        )
        if gain < cfg.min_coverage_gain:
            record["stop_reason"] = "diminishing_returns"
            break
    else:
        record["stop_reason"] = "max_rounds"
    targets_all = [*analysis.entities, *bridges]
    selected.sort(key=lambda v: -ranker.score(v, targets_all))
    record["bridges_found"] = bridges
    record["coverage"] = round(coverage, 3)
    return Selection([v["passage"] for v in selected], record)


def _coverage(chunks: Sequence[View], entities: Sequence[str], bridges: Sequence[str]) -> float:
    targets = list(dict.fromkeys([*entities, *bridges]))
    return 1.0 - len(gaps(chunks, entities, bridges)) / len(targets) if targets else 1.0
