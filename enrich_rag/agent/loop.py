"""The per-question agent loop, top to bottom:

AnalyzeQuery (entities, kind)
for each enrichment round (0 .. max_enrich_rounds):
    search:  one corpus search for the question; GraphRank (the neighbourhood in one DuckDB query,
             personalized PageRank over its entities and passages) when the strategy reads the graph
    choose:  the context strategy (`evidence.selection`, chosen once: tree, entity-first, PageRank)
             makes the round's choice once (entity-first's selection and scores)
    per iteration i:  EnrichContext (its context at k + i passages) -> CheckSufficiency (read)
             until perplexity is under the threshold or stops improving (or, `agent.grow: unstated`,
             until what it read states its answer), or the iteration cap
    decide:  AnalyzeDecide: under the threshold -> answer; else EnrichGraph -> retry
with `agent.hops`: Plan first, or (`agent.plan_when: unsure`) only after the rounds above read the
question whole and did not find its answer stated; with `agent.route`, only when the parse shows a
comparison or a description (Route). A chain's hops each run the rounds above on their own
sub-question (_chain); a question kept whole that names a thing by a description is checked for a stop
at that bridge (_bridge)
answer = the best hypothetical answer of all rounds (stated, then lowest perplexity), with the evidence behind it as
citations; its confidence from the corpus's fitted model when there is one (agent/confidence.py); unsure
when that confidence is under `agent.sure_confidence`, or without a model when the perplexity stays over
the threshold, or what it read does not state its answer or a hop's (`agent.abstain`: say so instead)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.agent.citations import Citation, citation_from_dict, citations
from enrich_rag.agent.confidence import WrongAnswerModel, confidence_file, confidence_summary, features_of, load_wrong_answer_model
from enrich_rag.agent.context_choice import ContextChoice, ContextRound, SurfacedRound, context_choice, hop_choice
from enrich_rag.agent.descriptions import FIRST_ANSWER, bridge_split
from enrich_rag.agent.enrich_context import Subgraph, passage_node
from enrich_rag.agent.enrich_graph import EnrichResult, already_read, enrich_graph
from enrich_rag.agent.hops import Hop, chain_evidence, grounded, hop_analysis, merged_subgraph, read_states_answer, same_answer
from enrich_rag.agent.learned import LEARNED, learned_fact, learned_tables, recall
from enrich_rag.agent.plan import CHAIN, ONE_HOP, Plan, make_plan, one_hop
from enrich_rag.agent.quote import Quote, quote
from enrich_rag.agent.records import (
    Bridged,
    ComparedSides,
    Confident,
    ContextBuilt,
    Decided,
    Enriched,
    HopAnswered,
    Learned,
    Planned,
    QueryAnalyzed,
    Queued,
    Ranked,
    Read,
    Recalled,
    Routed,
    Tool,
)
from enrich_rag.agent.resources import Resources
from enrich_rag.agent.route import WHOLE, Route, route
from enrich_rag.agent.sufficiency import (
    ANSWER,
    ANSWER_UNSURE,
    CONVERGED,
    ENRICH,
    GROUNDED,
    UNDER_THRESHOLD,
    Evidence,
    Sufficiency,
    analyze_decide,
    check_sufficiency,
    converged,
    evidence_text,
    reading_line,
    recorded,
)
from enrich_rag.agent.trace import Step, Trace
from enrich_rag.config import AgentConfig, EvidenceConfig
from enrich_rag.errors import EnrichRagError
from enrich_rag.evidence.graph_rank import GraphRanking, rank_passages
from enrich_rag.evidence.lines import near_question
from enrich_rag.evidence.query_analysis import COMPARISON, QueryAnalysis, analyze_query
from enrich_rag.evidence.select import RELEVANCE_POOL_FACTOR, Selection, select_evidence
from enrich_rag.index.graph_index import search_graph
from enrich_rag.llm.comparison import compare, parse_comparison
from enrich_rag.llm.models import model_name, ppl_threshold
from enrich_rag.storage.enrichment_jobs import LEARN, EnrichmentJob
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge

MAX_QUESTION_CHARS = 2000
NOT_FOUND = "Not found in the documents"  # the answer when `agent.abstain` and the loop stays unsure
GAP_TOP = 5  # PageRank passages whose unextracted chunks count as a gap the graph can see (enrich_on_gaps)
RECALL_CANDIDATES = 5  # graph-index hits a (sub-)question looks among for a similar learned fact
SURFACED_TOP = 5  # PageRank passages a retried round compares with the round before's (retry_context: surfaced)
NO_TIME = "no time left to enrich within the request's limit"


class QueryError(EnrichRagError):
    pass


NOW, BACKGROUND = "now", "background"


def enrich_when(config: AgentConfig, enrich: bool | str | None) -> str | None:
    """When a question's enrichment runs (None: never): a caller's False, "now" or "background", or the
    project's `agent.enrich_when` for True, and for None when `agent.allow_enrich`."""
    if enrich is None:
        return config.enrich_when if config.allow_enrich else None
    if enrich is True:
        return config.enrich_when
    if enrich is False:
        return None
    if enrich in (NOW, BACKGROUND):
        return str(enrich)
    raise QueryError(f"enrich must be 'background', 'now', true or false, not {enrich!r}")


@dataclass
class Answer:
    question: str
    answer: str
    perplexity: float
    sure: bool  # the loop's own verdict: the fitted confidence, or the perplexity rule without one
    citations: list[Citation]
    subgraph: dict[str, Any]
    trace: Trace = field(repr=False)
    threshold: float = 0.0  # the perplexity under which an answer counts as sure
    chain: list[dict[str, Any]] = field(default_factory=list)  # a planned question's hops (empty: read as one)
    confidence: float | None = None  # 1 - P(wrong) from the corpus's fitted model; None where none was fitted
    queued: list[str] = field(default_factory=list)  # enrichment jobs queued to run after this answer
    quote: Quote | None = None  # the line of a cited passage that states the answer (agent/quote.py)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: an unreadable answer's infinite perplexity is null."""
        return {
            "question": self.question,
            "answer": self.answer,
            "perplexity": self.perplexity if math.isfinite(self.perplexity) else None,
            "sure": self.sure,
            "threshold": self.threshold,
            "confidence": self.confidence,
            "citations": [c.to_dict() for c in self.citations],
            "subgraph": self.subgraph,
            "chain": self.chain,
            "queued": self.queued,
            "quote": self.quote.to_dict() if self.quote else None,
            "trace": self.trace.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        """An answer a server sent back (`enrich-rag query` against a running server)."""
        perplexity = data.get("perplexity")
        return cls(
            data["question"],
            data["answer"],
            math.inf if perplexity is None else float(perplexity),
            bool(data["sure"]),
            [citation_from_dict(c) for c in data.get("citations", [])],
            data.get("subgraph", {}),
            Trace.from_dict(data.get("trace", {"question": data["question"]})),
            float(data.get("threshold", 0.0)),
            list(data.get("chain", [])),
            data.get("confidence"),
            list(data.get("queued", [])),
            Quote(**data["quote"]) if data.get("quote") else None,
        )


@dataclass
class Asked:
    """One question while the loop answers it: what every tool of the loop is handed, instead of the
    trace, the read cache and the time limit passed one by one."""

    analysis: QueryAnalysis
    trace: Trace
    allow_enrich: bool
    enrich_later: bool = False  # an enrichment is queued to run after the answer, not waited for
    time_for_enrichment: Callable[[], bool] | None = None
    recalled: bool = False  # the question itself was answered from a learned fact
    searched: tuple[GraphRanking, list[Passage]] | None = None  # the first read's search and GraphRank, reused by round 0
    # Every (question, context) read so far, by its lines: greedy decoding of the same prompt gives the same answer.
    done: dict[tuple[str, ...], Sufficiency] = field(default_factory=dict)

    @property
    def question(self) -> str:
        return self.analysis.question

    def has_time_to_enrich(self) -> bool:
        """A queued round costs the answer nothing; one waited for must fit the request's time limit."""
        return self.enrich_later or self.time_for_enrichment is None or self.time_for_enrichment()


@dataclass
class SearchRound:
    """The best hypothetical answer of one round and the subgraph it was read from."""

    best: Sufficiency | None = None
    subgraph: Subgraph = field(default_factory=Subgraph)
    ranked: tuple[Passage, ...] = ()  # the round's PageRank passages: what EnrichGraph reads first
    grounded: bool = True  # a hop's read: what it read states its answer
    searched: bool = False  # the search's first read, which states its answer (no bridge check reads past it)

    def better_than(self, other: SearchRound) -> bool:
        """A grounded read beats an ungrounded one; then the lower perplexity."""
        return other.best is None or (self.grounded, -self.perplexity) > (other.grounded, -other.perplexity)

    @property
    def perplexity(self) -> float:
        return self.best.perplexity if self.best else float("inf")

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        return self.best.evidence if self.best else ()


def validate_question(question: str) -> str:
    if not isinstance(question, str) or not question.strip():
        raise QueryError("question is empty")
    if "\x00" in question:
        raise QueryError("question contains binary data (NUL bytes)")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes reach Python as lone surrogates (argv, files read with errors)
        raise QueryError("question is not valid UTF-8 text") from None
    if len(question) > MAX_QUESTION_CHARS:
        raise QueryError(f"question is {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
    return " ".join(question.split())


def top_passages(ranking: GraphRanking, hits: Sequence[Passage], k: int) -> list[Passage]:
    """GraphRank's passages topped up from the search: the search's top k."""
    seen = {p.id for p in ranking.passages}
    return [*ranking.passages, *(h for h in hits if h.id not in seen)][:k]


def _context_built(sub: Subgraph, selection: dict[str, Any] | None, surfaced: Sequence[Passage]) -> ContextBuilt:
    return ContextBuilt(
        entry_points=len(sub.entry_ids),
        candidates=(sub.candidates[0], sub.candidates[1]),
        subgraph_nodes=len(sub.nodes),
        facts=len(sub.evidence),
        passages=len(sub.passages),
        fact_lines=len(sub.facts),
        chunk_ids=tuple(p.id for p in sub.passages),
        fact_ids=tuple(f.id for f in sub.facts),
        selection=selection,
        surfaced=tuple(p.id for p in surfaced) if surfaced else None,
    )


class Agent:
    """The loop over one question; its context strategy is chosen once, from `evidence.selection`."""

    def __init__(self, resources: Resources, config: AgentConfig, evidence: EvidenceConfig):
        self.resources = resources
        self.config = config
        self.evidence = evidence
        self.max_new_tokens = resources.config.llm.max_new_tokens
        self.ppl_threshold = ppl_threshold(self.config, resources.config.llm)  # calibrated per model
        # P(wrong) fitted on this corpus's questions for this reader (None: the perplexity rule decides sure)
        self.wrong_answers = load_wrong_answer_model(confidence_file(resources.config.paths.root), model_name(resources.config.llm))
        self.choice = context_choice(config, evidence, self.select)
        # A plan's hops: one single-hop question each, one passage first (`evidence.hop_k`), read alone or growing.
        self.hop_choice = hop_choice(config, evidence, self.select)

    def answer(
        self,
        question: str,
        allow_enrich: bool | str | None = None,
        should_stop: Callable[[], str | None] | None = None,
        time_for_enrichment: Callable[[], bool] | None = None,
        on_step: Callable[[Step], None] | None = None,
    ) -> Answer:
        """`allow_enrich`: False never writes; "background" queues an unsure answer's enrichment to run after
        it; "now" waits for the round and reads again; True or None: `agent.enrich_when` (None: only when
        `agent.allow_enrich`). `should_stop` is asked before every tool (a time limit, a client gone); a reason raises QueryStopped.
        `time_for_enrichment` is asked before an EnrichGraph round: False answers with what was read
        (unsure) instead of starting a round the request's time limit cannot hold. `on_step` is told
        of each step as it finishes (a stream)."""
        question = validate_question(question)
        trace = Trace(question, should_stop=should_stop, on_step=on_step)
        start = time.perf_counter()
        when = enrich_when(self.config, allow_enrich)
        asked = Asked(self._analyze(question, trace), trace, when is not None, when == BACKGROUND, time_for_enrichment)
        hops, best = self._read_question(asked)
        text = self._compared(asked, best)
        cited, chain = citations(best.evidence), [h.record() for h in hops]
        confidence = self._confidence(asked, text, best, chain)
        line = quote(text, best.evidence, question)
        if confidence is None:  # a stating line alone called wrong answers sure on held-out docs (agent/quote.py)
            sure = best.perplexity < self.ppl_threshold and best.grounded and all(h.grounded for h in hops)
        else:
            sure = confidence >= self.config.sure_confidence
        if when is not None and self.config.learn and (facts := self._taught(asked, hops, best)):
            self._learn(asked, when, facts)
        if not sure and self.config.abstain:
            text = NOT_FOUND
        trace.seconds = round(time.perf_counter() - start, 4)
        queued = [r.job.id for r in trace.records(Queued)]
        subgraph = best.subgraph.to_dict()
        line = None if text == NOT_FOUND else line
        return Answer(question, text, best.perplexity, sure, cited, subgraph, trace, self.ppl_threshold, chain, confidence, queued, line)

    def _confidence(self, asked: Asked, text: str, best: SearchRound, chain: list[dict[str, Any]]) -> float | None:
        """1 - P(wrong) of the corpus's model over what the loop saw answering (None without a model)."""
        if self.wrong_answers is None:
            return None
        with asked.trace.step(Tool.CONFIDENCE, answer=text) as step:
            confidence, features = self._confidence_of(self.wrong_answers, asked, text, best, chain)
            step.record = Confident(confidence, self.config.sure_confidence, features)
        return confidence

    def _confidence_of(
        self, model: WrongAnswerModel, asked: Asked, text: str, read: SearchRound, chain: list[dict[str, Any]]
    ) -> tuple[float, dict[str, float]]:
        """The features an evaluation's prediction row yields for the same answer (`confidence.features_of`)."""
        summary = confidence_summary(read.perplexity, asked.trace, chain)
        chunk_ids = [c.chunk_id for c in citations(read.evidence)]
        features = features_of(asked.question, text, summary, chunk_ids, self._chunk_texts)
        return round(1.0 - model.probability(features), 4), features

    def _chunk_texts(self, chunk_ids: Sequence[str]) -> list[str]:
        return [p.content for p in self.resources.passages.by_ids(list(dict.fromkeys(chunk_ids)))]

    def _read_question(self, asked: Asked) -> tuple[list[Hop], SearchRound]:
        """Plan first and read what the plan says (`agent.plan_when: always`), or read the question whole
        first and plan only when what that read does not state its answer (unsure): a read that found its
        answer is not paid for again (but for the bridge check, which reads on only where the whole read
        stopped at a described thing), and a chain that does not ground gives way to the whole read."""
        if recalled := self._recalled(asked, asked.analysis, self._stated(asked.analysis)):
            asked.recalled = True
            return [], recalled[0]
        if self.config.plan_when == "always" or not self.config.hops:
            plan = self._plan(asked) if self._plans(asked) else one_hop(asked.question)
            return self._whole(asked) if plan.kind == ONE_HOP else self._chain(asked, plan)
        whole = self._one_read(asked)
        by_statement = self.config.first_read or self.config.grow == "unstated"
        unsure = not whole.grounded if by_statement else whole.perplexity >= self.ppl_threshold
        if not unsure or not self._plans(asked) or (plan := self._plan(asked)).kind == ONE_HOP:
            return self._whole(asked, whole)
        hops, chained = self._chain(asked, plan)
        return (hops, chained) if chained.grounded else ([], whole)

    def _whole(self, asked: Asked, best: SearchRound | None = None) -> tuple[list[Hop], SearchRound]:
        """The question read as one (`best`: already read); a question that names a thing by a description
        is then checked for a stop at that bridge (`agent.bridge_check`)."""
        best = best or self._one_read(asked)
        if self.config.hops and self.config.bridge_check and not best.searched and (bridged := self._bridge(asked, best)):
            return bridged
        return [], best

    def _one_read(self, asked: Asked) -> SearchRound:
        """The question read as one: first the search's top passages whole (`agent.first_read`, one reader
        call), which answers when what it read states its answer; else the tree's rounds, whose read is
        kept when it states its answer, and otherwise the lower perplexity of the two. On documentation the
        tree answered from a neighbouring line of the right page where the search's top passages read whole
        did not (bench_results/search_read_*.json)."""
        if not self.config.first_read:
            return self._rounds(asked)
        stated = self._stated(asked.analysis)
        first = self._search_read(asked, stated)
        if first.grounded:
            with asked.trace.step(Tool.ANALYZE_DECIDE, perplexity=recorded(first.perplexity), threshold=self.ppl_threshold) as step:
                step.record = Decided(ANSWER, "what the search's top passages say states the answer")
            return dataclasses.replace(first, searched=True)
        rounds = self._rounds(asked)
        rounds.grounded = rounds.best is not None and stated(rounds.best)
        return rounds if rounds.better_than(first) else first

    def _search_read(self, asked: Asked, stated: Callable[[Sufficiency], bool]) -> SearchRound:
        """One read of the search's top `agent.first_read` passages (GraphRank's order, topped up from the
        search: what `EnrichRAG.search` returns), each cut to the units near the question's words
        (`agent.first_read_cut`; evidence/lines.py)."""
        k = self.config.first_read
        with asked.trace.step(Tool.GRAPH_RANK, query=asked.question, round=0) as step:
            hits = self.search(asked.question)
            ranking = self.rank(asked.analysis, hits)
            step.record = Ranked.of(ranking)
        asked.searched = (ranking, hits)
        top = [near_question(p, asked.question, self.config.first_read_cut) for p in top_passages(ranking, hits, k)]
        nodes = [{"id": passage_node(p.id), "name": p.title or p.id, "kind": "passage", "chunk_id": p.id, "prize": 0.0} for p in top]
        sub = Subgraph(nodes=nodes, evidence=list(top))
        with asked.trace.step(Tool.ENRICH_CONTEXT, query=asked.question, budget=k, round=0) as step:
            step.record = _context_built(sub, {"read": "search", "k": k}, ())
        result, is_stated, _ = self._read(asked, asked.question, sub, 0, [], stated, alone=True)
        return SearchRound(result, sub, tuple(ranking.passages), is_stated)

    def _rounds(self, asked: Asked) -> SearchRound:
        """Search rounds, each retried after an enrichment when it was not enough. The answer is the
        round that read best."""
        best = before = SearchRound()
        stated = self._stated(asked.analysis) if self.config.grow == "unstated" else None
        for round_ in range(self.config.max_enrich_rounds + 1):
            found = self._search_round(asked, asked.analysis, round_, before, grounding=stated, whole=stated is not None)
            decision = self._decide(asked, found, round_)
            if found.perplexity < best.perplexity or best.best is None:
                best = found  # an enrichment round keeps its answer only when it reads better
            if decision != ENRICH or self._queued(asked, asked.question, found) or not self._enrich(asked, asked.question, found).grew:
                break
            before = found
        return best

    @staticmethod
    def _stated(analysis: QueryAnalysis) -> Callable[[Sufficiency], bool]:
        """A whole read found its answer when what it read states it; a comparison's answer names one of
        the question's own sides, so only its evidence is asked."""
        if analysis.kind == COMPARISON:
            return read_states_answer
        return functools.partial(grounded, question=analysis.question)

    def _plans(self, asked: Asked) -> bool:
        """Whether the question gets a Plan call: with hops, always but for a comparison read as one
        (`agent.compare_in_one_read`), or (`agent.route`) only when its parse shows a comparison or a
        description the planner would chain through."""
        if not self.config.hops:
            return False
        compared_whole = self.config.compare_in_one_read and asked.analysis.kind == COMPARISON
        if not self.config.route and not compared_whole:
            return True
        with asked.trace.step(Tool.ROUTE, query=asked.question) as step:
            routed = Route(WHOLE, "comparison") if compared_whole else route(asked.analysis, self.resources.nlp)
            step.record = Routed(routed.decision, routed.reason)
        return routed.plans

    def _plan(self, asked: Asked) -> Plan:
        with asked.trace.step(Tool.PLAN, query=asked.question) as step:
            plan = make_plan(self.resources.llm, asked.question)
            step.record = Planned(plan)
        return plan

    def _chain(self, asked: Asked, plan: Plan) -> tuple[list[Hop], SearchRound]:
        """Each hop searched and read on its own, its slots filled with the answers before it. A chain
        answers with its last hop; side-by-side hops and comparisons with one read over all of them.
        A hop that stays ungrounded is where EnrichGraph goes (when enrichment is allowed, earliest hops
        first, `max_enrich_rounds` in all)."""
        hops: list[Hop] = []
        rounds_left = self.config.max_enrich_rounds if asked.allow_enrich else 0
        for index in range(len(plan.hops)):
            answers = [h.answer for h in hops]
            earlier = answers if plan.kind == CHAIN else []
            hop, enriched = self._hop(asked, plan.filled(index, answers), index + 1, earlier, rounds_left > 0)
            rounds_left -= enriched
            hops.append(hop)
        return hops, self._composed(asked, plan.kind, hops)

    def _hop(self, asked: Asked, question: str, index: int, earlier: Sequence[str], may_enrich: bool = False) -> tuple[Hop, bool]:
        """One hop read on its own tree, and whether it used an enrichment round. An ungrounded hop (when
        `may_enrich`) has its own passages and PageRank's top for it extracted deeply, and only it is read
        again. In a chain (`earlier`: the answers before it) a hop that reads an earlier answer back is
        not grounded."""
        sub = hop_analysis(analyze_query(question, self.resources.nlp, self.resources.store), earlier)
        grounding = functools.partial(grounded, question=sub.question, earlier=earlier)
        recalled = self._recalled(asked, sub, grounding, earlier)
        found = recalled[0] if recalled else self._search_round(asked, sub, 0, SearchRound(), self.hop_choice, grounding)
        enriched = False
        decided = not found.grounded and may_enrich and self._hop_decision(asked, index, found) == ENRICH
        if decided and not self._queued(asked, sub.question, found):
            enriched = True
            if self._enrich(asked, sub.question, found).grew:
                retried = self._search_round(asked, sub, 1, found, self.hop_choice, grounding)
                found = retried if retried.better_than(found) else found
        said, sure = (found.best.answer, found.grounded) if found.best else ("", False)
        learned = recalled[1] if recalled else ""
        hop = Hop(index, sub.question, said, found.perplexity, sure, found.evidence, found.subgraph, learned, sub.entities)
        with asked.trace.step(Tool.HOP, hop=hop.index, question=hop.question) as step:
            step.record = HopAnswered(hop)
        return hop, enriched

    def _composed(self, asked: Asked, kind: str, hops: list[Hop]) -> SearchRound:
        """A chain's answer is its last hop's, with every hop's passages; side-by-side hops and
        comparisons are composed by one final read over the hops' answers."""
        drawn = [h.subgraph for h in hops]
        if kind == CHAIN and asked.analysis.kind != COMPARISON:
            last = hops[-1]
            read = list(dict.fromkeys(e for h in hops for e in h.evidence))
            answer = Sufficiency(last.answer, last.perplexity, tuple(read))
            return SearchRound(answer, merged_subgraph(drawn, read), grounded=last.grounded)
        evidence = chain_evidence(hops)
        with asked.trace.step(Tool.CHECK_SUFFICIENCY, facts=len(evidence), hops=len(hops)) as step:
            composed = check_sufficiency(self.resources.llm, asked.question, evidence, self.max_new_tokens)
            step.record = Read.of(composed)
        return SearchRound(composed, merged_subgraph(drawn, evidence))

    def _bridge(self, asked: Asked, whole: SearchRound) -> tuple[list[Hop], SearchRound] | None:
        """A question the planner kept whole that names a thing by a description (agent/descriptions.py):
        the description is read as a hop of its own. When that hop answers what the whole read answered,
        the whole read stopped at the bridge, and the rest of the question, with that answer in the
        description's place, is read as hop 2, whose answer is the answer. Otherwise the whole read
        stands (None)."""
        if whole.best is None or asked.analysis.kind == COMPARISON:
            return None
        split = bridge_split(asked.question, self.resources.nlp)
        if split is None:
            return None
        first, _ = self._hop(asked, split.first, 1, [])
        goes_on = same_answer(first.answer, whole.best.answer)  # an empty hop answer names nothing
        with asked.trace.step(Tool.BRIDGE, description=split.description) as step:
            step.record = Bridged(split, whole.best.answer, first.answer, goes_on)
        if not goes_on:
            return None
        second, _ = self._hop(asked, split.rest.replace(FIRST_ANSWER, first.answer), 2, [first.answer])
        hops = [first, second]
        return hops, self._composed(asked, CHAIN, hops)

    def _analyze(self, question: str, trace: Trace) -> QueryAnalysis:
        with trace.step(Tool.ANALYZE_QUERY, query=question) as step:
            analysis = analyze_query(question, self.resources.nlp, self.resources.store)
            step.record = QueryAnalyzed(analysis)
        return analysis

    def search(self, question: str) -> list[Passage]:
        """The round's one corpus search: PageRank's dense seeds and entity-first's candidates both come from it."""
        limit = max(self.resources.config.retrieval.graph_passages, self.evidence.candidates * RELEVANCE_POOL_FACTOR)
        return self.resources.retrieval().corpus(question, limit)

    def retrieve(self, question: str, k: int, graph: bool = True) -> list[Passage]:
        """What the reader would be offered, without the reader: the corpus search re-ranked by GraphRank
        (PageRank over the question's neighbourhood), topped up from the search; `graph=False`: the
        hybrid search alone. Scores are relative to the best passage."""
        question = validate_question(question)
        hits = self.search(question)
        if not graph:
            return hits[:k]
        return top_passages(self.rank(analyze_query(question, self.resources.nlp, self.resources.store), hits), hits, k)

    def rank(self, analysis: QueryAnalysis, hits: Sequence[Passage]) -> GraphRanking:
        """GraphRank: one read of the question's neighbourhood, PageRank over it."""
        resources = self.resources
        return rank_passages(
            analysis.question,
            hits,
            store=resources.store,
            graph_index=resources.graph_index,
            passages=resources.passages,
            config=resources.config.retrieval,
            embeddings=resources.config.embeddings,
            query_entities=analysis.entities,
            limit=max(self.evidence.candidates, self.evidence.k),
        )

    def select(
        self, analysis: QueryAnalysis, hits: Sequence[Passage], graph_passages: Sequence[Passage], use_graph: bool, evidence: EvidenceConfig
    ) -> Selection:
        """Entity-first selection over the round's hits; the graph's PageRank passages join its candidate pool."""
        retrieval = self.resources.retrieval()
        if not use_graph:
            retrieval = dataclasses.replace(retrieval, graph=None)
        reranker = self.resources.reranker(evidence)
        return select_evidence(analysis, retrieval, evidence, reranker, self.resources.nlp, graph_passages, hits)

    def _search_round(
        self,
        asked: Asked,
        analysis: QueryAnalysis,
        round_: int,
        before: SearchRound,
        choice: ContextChoice | None = None,
        grounding: Callable[[Sufficiency], bool] | None = None,
        whole: bool = False,
    ) -> SearchRound:
        """Search -> choose -> read, one passage wider each iteration, until more context stops helping.
        A round after an enrichment (`before`: the round it retries) first reads what the enrichment
        surfaced, when it surfaced any. A context read before for the same question (`asked.done`) is not read
        again: greedy decoding of the same prompt gives the same answer, at a reader call's cost. With `grounding` (a hop), a
        read whose answer what it read does not state is not sure, and a round without a grounded read
        reads once more, one passage wider; a hop that reads its passages alone stops at the first grounded
        read (perplexities over different single passages do not rank them: a distractor read alone is
        often read as surely). A `whole` read checked by `grounding` (`agent.grow: unstated`) stops at its
        first read that states its answer and reads no more than `max_iterations`."""
        question, choice = analysis.question, choice or self.choice
        ranking, hits = self._search(asked, analysis, round_, choice)
        surfaced = self._surfaced(before, ranking) if self.config.retry_context == "surfaced" else []
        chooser: ContextRound | None = None
        if surfaced:
            chooser = SurfacedRound([e for e in before.evidence if isinstance(e, Passage)], surfaced, ranking)
        found, sub = SearchRound(), Subgraph()
        history: list[Sufficiency] = []
        iterations, retried = self.config.max_iterations, grounding is None or whole
        iteration = 0
        while iteration < iterations:
            with asked.trace.step(Tool.ENRICH_CONTEXT, query=question, budget=choice.evidence.k + iteration, round=round_) as step:
                chooser = chooser or choice.round(analysis, ranking, hits())
                wider = chooser.at(iteration, sub)
                step.record = _context_built(wider, chooser.record if iteration == 0 else None, surfaced)
            if iteration and wider.evidence == sub.evidence:
                break  # the tree has nothing more to give
            sub = wider
            result, is_grounded, stop = self._read(asked, question, sub, iteration, history, grounding, choice.alone or whole)
            read = SearchRound(result, sub, tuple(ranking.passages) if ranking else (), is_grounded)
            if read.better_than(found):
                found = read
            iteration += 1
            if (stop or iteration == iterations) and not found.grounded and not retried:
                iterations, retried, stop = iteration + 1, True, None  # an ungrounded hop: one read more
            if stop:
                break
        return found

    def _search(
        self, asked: Asked, analysis: QueryAnalysis, round_: int, choice: ContextChoice
    ) -> tuple[GraphRanking | None, Callable[[], list[Passage]]]:
        """The round's corpus search, done once and only when used (a surfaced retry of a list strategy
        needs none), and GraphRank over it when the strategy reads the graph."""
        if round_ == 0 and analysis is asked.analysis and asked.searched and choice.reads_graph:
            ranking, found = asked.searched  # the first read searched and ranked this question already
            return ranking, lambda: found
        hits = functools.cache(lambda: self.search(analysis.question))
        if not choice.reads_graph:
            return None, hits
        with asked.trace.step(Tool.GRAPH_RANK, query=analysis.question, round=round_) as step:
            ranking = self.rank(analysis, hits())
            step.record = Ranked.of(ranking)
        return ranking, hits

    def _read(
        self,
        asked: Asked,
        question: str,
        sub: Subgraph,
        iteration: int,
        history: list[Sufficiency],
        grounding: Callable[[Sufficiency], bool] | None = None,
        alone: bool = False,
    ) -> tuple[Sufficiency, bool, str | None]:
        """CheckSufficiency: the reader's hypothetical answer over this context, whether what it read states
        that answer (always, without `grounding`), and whether to stop."""
        done = asked.done
        with asked.trace.step(Tool.CHECK_SUFFICIENCY, facts=len(sub.evidence), iteration=iteration) as step:
            key = (question, *(reading_line(e) for e in sub.evidence))  # a hop asks its own question of a passage read before
            reused = key in done
            if not reused:
                done[key] = check_sufficiency(self.resources.llm, question, sub.evidence, self.max_new_tokens)
            result = done[key]
            history.append(result)
            is_grounded = grounding is None or grounding(result)
            stop = self._stop_reason(result, history, is_grounded, alone)
            step.record = Read.of(result, grounded=is_grounded if grounding else None, reason=stop, reused=reused)
        return result, is_grounded, stop

    def _recalled(
        self, asked: Asked, analysis: QueryAnalysis, grounding: Callable[[Sufficiency], bool], earlier: Sequence[str] = ()
    ) -> tuple[SearchRound, str] | None:
        """A learned fact for this (sub-)question, before any search (agent/learned.py): the same question
        learned surely (`agent.recall_trust`) is answered from the record, with no reader call; a similar
        one, or a less sure record, has its cited passage read alone and counts only when that read states
        its answer. The round and the fact's id; None: search as usual."""
        if not self.config.learn:
            return None
        resources = self.resources
        found = recall(resources.store, analysis.question, analysis.entities, self.config.recall_match, earlier, self._similar_facts)
        if found is None:
            return None  # the common case: no step in the trace
        with asked.trace.step(Tool.RECALL, query=analysis.question) as step:
            passage = next(iter(self.resources.passages.by_ids([found.fact.chunk_id])), None)
            answered = found.exact and (self.config.recall_trust == "exact" or found.perplexity < self.ppl_threshold)
            step.record = Recalled(found, "gone" if passage is None else "answered" if answered else "read")
        if passage is None:
            return None
        sub = Subgraph(evidence=[passage])
        if answered:
            return SearchRound(Sufficiency(found.fact.object, found.perplexity, (passage,)), sub), found.fact.id
        result, is_grounded, _ = self._read(asked, analysis.question, sub, 0, [], grounding, alone=True)
        return (SearchRound(result, sub, grounded=True), found.fact.id) if is_grounded else None

    def _similar_facts(self, question: str) -> list[str]:
        """Fact ids the graph index finds nearest to a question (a learned fact's text is its question)."""
        resources = self.resources
        hits = search_graph(resources.graph_index, question, RECALL_CANDIDATES, resources.config.embeddings)
        return [h["id"] for h in hits if h.get("kind") == "edge"]

    def _taught(self, asked: Asked, hops: Sequence[Hop], best: SearchRound) -> list[Edge]:
        """The facts this answer learned: its grounded hops, and the question itself when what was read
        states its answer (a chain: when every hop grounded); none that was recalled."""
        reader = model_name(self.resources.config.llm)
        taught = [h for h in hops if h.grounded and not h.learned]
        facts = [learned_fact(h.question, h.answer, h.perplexity, h.evidence, h.entities, reader) for h in taught]
        whole = best.best is not None and all(h.grounded for h in hops) and not asked.recalled and self._stated(asked.analysis)(best.best)
        if whole and best.best is not None:
            facts.append(learned_fact(asked.question, best.best.answer, best.perplexity, best.evidence, asked.analysis.entities, reader))
        return list({f.id or f.relation: f for f in facts if f is not None}.values())

    def _learn(self, asked: Asked, when: str, facts: list[Edge]) -> None:
        """An answer's facts as one job after it (background), or one partition before it returns (now)."""
        with asked.trace.step(Tool.LEARN, facts=len(facts)) as step:
            if when == BACKGROUND:
                job = self.resources.jobs.put_learned(asked.question, [f.to_row() for f in facts])
                step.record = Learned(tuple(facts), job=job.id)
                return
            partition = self.learn(facts).get("partition")
            step.record = Learned(tuple(facts), partition=partition)
            if partition:
                asked.trace.partitions_written.append(partition)

    def learn(self, facts: Sequence[Edge]) -> dict[str, Any]:
        """Commit learned facts as one `learned-` partition (nothing when the graph holds them all)."""
        commit = self.resources.writer.commit(learned_tables(facts), prefix=LEARNED)
        return {"partition": commit.partition if commit else None, "facts": commit.edges if commit else 0}

    def _compared(self, asked: Asked, best: SearchRound) -> str:
        """The answer; a comparison of two dates is read again a side at a time (llm/comparison.py)."""
        text = best.best.answer if best.best else ""
        if best.best and (comparison := parse_comparison(asked.question)):
            with asked.trace.step(Tool.COMPARE, a=comparison.a, b=comparison.b) as step:
                compared = compare(self.resources.llm, comparison, [reading_line(e) for e in best.evidence], self.max_new_tokens)
                step.record = ComparedSides(compared)
            text = compared.answer or text
        return text

    @staticmethod
    def _surfaced(before: SearchRound, ranking: GraphRanking | None) -> list[Passage]:
        """PageRank's top passages that were neither in its top nor read in the round before: where the
        new facts pointed. A fresh selection rarely picks them (it scores the corpus as before)."""
        if before.best is None or ranking is None:
            return []
        seen = {p.id for p in before.ranked[:SURFACED_TOP]} | {e.id for e in before.evidence if isinstance(e, Passage)}
        return [p for p in ranking.passages[:SURFACED_TOP] if p.id not in seen]

    def _stop_reason(self, result: Sufficiency, history: list[Sufficiency], is_grounded: bool, alone: bool) -> str | None:
        """A read sure of an answer it did not read is not enough (one passage more). Reading alone, the
        first grounded read ends the hop, and perplexities of different passages are not a trend."""
        if not is_grounded:
            return None if alone or result.perplexity < self.ppl_threshold else self._converged(history)
        if alone:
            return GROUNDED
        if result.perplexity < self.ppl_threshold:
            return UNDER_THRESHOLD
        return self._converged(history)

    def _converged(self, history: list[Sufficiency]) -> str | None:
        return CONVERGED if converged(history, self.config.min_gain) else None

    def _decide(self, asked: Asked, found: SearchRound, round_: int) -> str:
        """Answer or enrich. With the corpus's fitted model, an answer the model is sure of is answered and
        one it is unsure of is enriched: perplexity alone fired on nearly every question and barely told
        right from wrong. Without a model, the perplexity threshold decides."""
        allow = asked.allow_enrich
        with asked.trace.step(Tool.ANALYZE_DECIDE, perplexity=recorded(found.perplexity), threshold=self.ppl_threshold) as step:
            decision = analyze_decide(found.perplexity, self.ppl_threshold)
            reason: str | None = None
            judged: float | None = None
            if self.wrong_answers is not None and found.best is not None:
                confidence, _ = self._confidence_of(self.wrong_answers, asked, found.best.answer, found, [])
                sure = confidence >= self.config.sure_confidence
                decision, judged = (ANSWER if sure else ENRICH), confidence
                reason = f"confidence {confidence:.2f} {'at least' if sure else 'under'} {self.config.sure_confidence}"
            if decision == ANSWER and allow and self.config.enrich_on_gaps and round_ < self.config.max_enrich_rounds:
                unread = self._unread(found.ranked[:GAP_TOP])
                if unread:
                    decision, reason = ENRICH, f"{len(unread)} unextracted passages in the graph's top {GAP_TOP}"
            if decision == ENRICH and not allow:
                decision, reason = ANSWER_UNSURE, "enrichment disabled"
            elif decision == ENRICH and round_ == self.config.max_enrich_rounds:
                decision, reason = ANSWER_UNSURE, "max_enrich_rounds reached"
            elif decision == ENRICH and not asked.has_time_to_enrich():
                decision, reason = ANSWER_UNSURE, NO_TIME
            step.record = Decided(decision, reason, judged)
        return decision

    def _hop_decision(self, asked: Asked, hop: int, found: SearchRound) -> str:
        """AnalyzeDecide for a hop whose reads stated no answer: the gap is precise (this hop's fact), so
        it is enriched unless the request's time limit cannot hold a round."""
        with asked.trace.step(Tool.ANALYZE_DECIDE, hop=hop, perplexity=recorded(found.perplexity), grounded=False) as step:
            decision, reason = ENRICH, f"hop {hop}: no passage it read states its answer"
            if not asked.has_time_to_enrich():
                decision, reason = ANSWER_UNSURE, NO_TIME
            step.record = Decided(decision, reason)
        return decision

    def _unread(self, passages: Sequence[Passage]) -> list[str]:
        covered = already_read(self.resources.store, [p.id for p in passages], self._deep)
        return [p.id for p in passages if p.id not in covered]

    @property
    def _deep(self) -> str:
        """The deep extractor's name when it is the LLM: then a chunk the seed read is still unread."""
        return "llm" if self.resources.config.extraction.deep == "llm" else ""

    def enrich(self, question: str, facts: list[str], candidates: Sequence[Passage] = ()) -> EnrichResult:
        """One EnrichGraph round with this agent's pieces (also `enrich-rag enrich`)."""
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
            deep=self._deep,
            targets=self.config.enrich_targets,
        )

    def _targets(self, found: SearchRound) -> list[Passage]:
        """What EnrichGraph extracts first: the tree's passages, then PageRank's."""
        passages = [e for e in found.evidence if isinstance(e, Passage)]
        if self.config.enrich_targets == "beyond_context":  # the reader read these whole; their facts add nothing to its prompt
            read_whole = {p.id for p in passages}
            return [p for p in found.ranked if p.id not in read_whole]
        return [*passages, *found.ranked]

    def _queued(self, asked: Asked, question: str, found: SearchRound) -> bool:
        """With `enrich_later`, the round goes to the project's queue (True) and the answer does not wait."""
        if not asked.enrich_later:
            return False
        with asked.trace.step(Tool.QUEUE_ENRICHMENT, question=question) as step:
            facts = [evidence_text(e) for e in found.evidence]
            job = self.resources.jobs.put(question, facts, list(dict.fromkeys(p.id for p in self._targets(found))))
            step.record = Queued(job)
        return True

    def run_job(self, job: EnrichmentJob) -> dict[str, Any]:
        """A queued round (or an answer's learned facts), as the answer that queued it would have run it
        (`enrich-rag enrich --pending`, the server's worker)."""
        if job.kind == LEARN:
            return self.learn([Edge.from_row(f) for f in job.learned])
        candidates = self.resources.passages.by_ids(list(job.candidates))
        return self.enrich(job.question, list(job.facts), candidates).record()

    def _enrich(self, asked: Asked, question: str, found: SearchRound) -> EnrichResult:
        with asked.trace.step(Tool.ENRICH_GRAPH, question=question) as step:
            enriched = self.enrich(question, [evidence_text(e) for e in found.evidence], self._targets(found))
            step.record = Enriched(enriched)
            if enriched.partition:
                asked.trace.partitions_written.append(enriched.partition)
        return enriched
