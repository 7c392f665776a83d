"""What a synthetic question can be about: facts of the graph, and pairs of them.

- single: one fact (subject, relation, object) and its evidence sentence; the answer is the object.
- bridge: fact A ends at entity E, and a passage about E (its title names E) holds fact B from E;
  the question needs both passages, the answer is B's object.
- comparison: two facts with the same relation about two entities of the same type, each from a
  passage about its subject; the question compares them. For names the facts decide the answer
  (the same value: yes, else no) and the draw alternates yes, no and number pairs, so a writer's
  leaning to "yes" cannot fill the set with one answer.

Every list is shuffled by the seed, so a generation run is reproducible and a larger `n` extends a
smaller one's draw order.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from enrich_rag.eval.metrics import normalize_answer
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.schema import Edge
from enrich_rag.text import mentions

SINGLE_FACT, BRIDGE, COMPARISON = "single", "bridge", "comparison"
KINDS = (SINGLE_FACT, BRIDGE, COMPARISON)
MAX_NAME_CHARS = 60  # longer "entities" are extraction noise, not answers
# A second hop that only renames the bridge ("known as") makes the answer an alias of it, not a new fact.
ALIAS_RELATIONS = frozenset({"known as", "also known as", "is", "was", "called", "named"})
GROUP_SAMPLE = 60  # facts drawn per (relation, type) group before pairing: pairs grow with its square
DISTRACTORS = 2  # passages read beside a bridge's answer passage when checking that it needs its first hop


@dataclass(frozen=True)
class Candidate:
    kind: str
    facts: tuple[Edge, ...]  # single: one; bridge: (A, B); comparison: the two facts compared
    answer: str  # single, bridge: the reference answer; comparison: yes/no for names, "" (the writer picks) for numbers
    distractors: tuple[str, ...] = ()  # bridge: chunks that state B's relation of other entities

    @property
    def chunk_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.chunk_id for f in self.facts))

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.doc_id for f in self.facts))

    @property
    def bridge(self) -> str:
        return self.facts[0].object if self.kind == BRIDGE else ""

    @property
    def entities(self) -> tuple[str, str]:
        return (self.facts[0].subject, self.facts[1].subject) if self.kind == COMPARISON else ("", "")

    @property
    def key(self) -> tuple[str, ...]:
        """The same facts asked twice would be the same question."""
        return tuple(sorted(f.id for f in self.facts))


def _usable(fact: Edge) -> bool:
    """The object is a short name that the evidence sentence states."""
    name = fact.object.strip()
    return 1 < len(name) <= MAX_NAME_CHARS and fact.subject.strip() != "" and mentions(fact.evidence, name)


def load_facts(store: GraphStore) -> tuple[list[Edge], dict[str, str]]:
    """Usable facts, and each fact's subject type: comparisons pair subjects of one type."""
    rows = store.named_facts()
    facts = [f for f in (Edge.from_row(r | {"confidence": 1.0, "extractor": ""}) for r in rows) if _usable(f)]
    return facts, {r["id"]: r["src_type"] or "" for r in rows}


def _value_kind(name: str) -> str:
    """Dates and numbers compare by order, names by identity; a node's NER type is too noisy to tell."""
    return "number" if any(ch.isdigit() for ch in name) else "name"


def single_candidates(facts: list[Edge], rng: random.Random) -> Iterator[Candidate]:
    order = list(facts)
    rng.shuffle(order)
    for fact in order:
        yield Candidate(SINGLE_FACT, (fact,), fact.object)


def _about_own_subject(facts: list[Edge], about: dict[str, set[str]]) -> list[Edge]:
    return [f for f in facts if f.chunk_id in about.get(f.src, ())]


def bridge_candidates(facts: list[Edge], about: dict[str, set[str]], rng: random.Random) -> Iterator[Candidate]:
    by_source_chunk: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for fact in facts:
        by_source_chunk[(fact.src, fact.chunk_id)].append(fact)
    by_relation: dict[str, list[Edge]] = defaultdict(list)
    for fact in _about_own_subject(facts, about):
        by_relation[fact.relation.casefold()].append(fact)
    pairs = []
    for first in facts:
        for chunk in sorted(about.get(first.dst, ())):
            if chunk == first.chunk_id:
                continue
            pairs += [
                (first, second)
                for second in by_source_chunk.get((first.dst, chunk), ())
                if second.dst not in (first.src, first.dst)
                and second.relation.casefold() not in ALIAS_RELATIONS
                and not mentions(first.evidence, second.object)
            ]
    rng.shuffle(pairs)
    for first, second in pairs:
        yield Candidate(BRIDGE, (first, second), second.object, distractors=_distractors(first, second, by_relation, rng=rng))


def _distractors(first: Edge, second: Edge, by_relation: dict[str, list[Edge]], rng: random.Random) -> tuple[str, ...]:
    """Passages that say the same of other entities ("X was born in Y"): beside them the answer
    passage no longer names the only candidate, so only the first hop tells which entity is meant."""
    own = {first.chunk_id, second.chunk_id}
    others = [
        f
        for f in by_relation.get(second.relation.casefold(), ())
        if f.chunk_id not in own and f.src not in (first.src, second.src) and normalize_answer(f.object) != normalize_answer(second.object)
    ]
    chunks = list(dict.fromkeys(f.chunk_id for f in rng.sample(others, min(len(others), 4 * DISTRACTORS))))
    return tuple(chunks[:DISTRACTORS])


def comparison_candidates(facts: list[Edge], types: dict[str, str], about: dict[str, set[str]], rng: random.Random) -> Iterator[Candidate]:
    """Same relation, same subject type, same kind of value ("born in" a year, for two PERSONs)."""
    groups: dict[tuple[str, ...], list[Edge]] = defaultdict(list)
    for fact in _about_own_subject(facts, about):
        groups[(fact.relation.casefold(), types.get(fact.id, ""), _value_kind(fact.object))].append(fact)
    by_answer: dict[str, list[Candidate]] = {"yes": [], "no": [], "": []}
    for key in sorted(groups):
        group = sorted(groups[key], key=lambda f: f.id)
        rng.shuffle(group)
        group = group[:GROUP_SAMPLE]
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if a.src != b.src and a.doc_id != b.doc_id:
                    answer = "" if key[2] == "number" else "yes" if normalize_answer(a.object) == normalize_answer(b.object) else "no"
                    by_answer[answer].append(Candidate(COMPARISON, (a, b), answer))
    for pool in by_answer.values():
        rng.shuffle(pool)
    yield from _round_robin(list(by_answer.values()))


def _round_robin(pools: list[list[Candidate]]) -> Iterator[Candidate]:
    for i in range(max(map(len, pools), default=0)):
        yield from (pool[i] for pool in pools if i < len(pool))


def candidates(store: GraphStore, seed: int) -> dict[str, Iterator[Candidate]]:
    facts, types = load_facts(store)
    about = store.title_chunks()
    return {
        SINGLE_FACT: single_candidates(facts, random.Random(seed)),
        BRIDGE: bridge_candidates(facts, about, random.Random(seed + 1)),
        COMPARISON: comparison_candidates(facts, types, about, rng=random.Random(seed + 2)),
    }
