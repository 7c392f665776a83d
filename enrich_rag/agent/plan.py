"""The plan: a question as a short chain of single-hop sub-questions, each read on its own.

"Who directed the film that won X?" becomes "Which film won X?" -> "Who directed #1?": the reader
writes the chain (`plan_prompt`, held to a JSON schema on llama.cpp), and each `#n` is filled with hop
n's answer before that hop is searched. A 1.5B reader answers one single-hop question over one passage
well and a whole chain read at once badly; a later hop's evidence can only be searched for once the
earlier answer is known.

A plan whose hops are independent (no `#n`: "When was A born?", "When was B born?") is read side by
side and composed by one final read; a chain's answer is its last hop's. What the planner wrote that
cannot be a plan (not JSON, a slot naming a later hop, more hops than `MAX_HOPS`, two hops that ask the
same thing, hops that leave out much of what the question says) falls back to the question itself as one
hop, and the trace says why.

The bridge of a question kept whole: aquestion kept whole that names a thing only by a description ("Who plays Marty's girlfriend in
Back to the Future?"): the description as a hop of its own, and the question with `#1` in its place.

The 1.5B planner keeps many two-hop questions as one hop, and the reader then often answers with the
thing the question only describes (the girlfriend, not the actress). spaCy's parse finds the
description without a model call: the innermost common noun described through a name, by an of-phrase
("the director of Inception"), a possessive ("FleetBoston Financial's purchaser") or a relative clause
("the film that won the 1998 Palme d'Or"). The loop reads it as a hop only to check whether the whole
read stopped at that bridge (agent/chain.py, `agent.bridge_check`)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import plan_prompt
from enrich_rag.text import asks_yes_no, content_words

WH_TAGS = {"WDT", "WP", "WP$", "WRB"}
# Left beside the slot, these ask for the described thing's name, not for something about it ("#1 is called what").
NAMING = {"called", "known", "named", "name", "referred"}
FIRST_ANSWER = "#1"


@dataclass(frozen=True)
class BridgeSplit:
    description: str
    first: str  # the description asked for on its own
    rest: str  # the question with the description's answer as #1

    def record(self) -> dict[str, Any]:
        return {"description": self.description, "first": self.first, "rest": self.rest}


def _has_name(tokens) -> bool:
    return any(t.pos_ == "PROPN" for t in tokens)


def _names_it(child) -> bool:
    """A possessor, of-phrase, relative clause or participle ("directed by X") that names something."""
    describes = child.dep_ in ("poss", "relcl", "acl") or (child.dep_ == "prep" and child.lower_ == "of")
    return describes and _has_name(child.subtree)


def _description(token) -> tuple[int, int] | None:
    """The span of a common noun described through a name: the noun with its determiners, modifiers and
    the naming phrase, but not a clause that names nothing ("the director of X born" parsed as one)."""
    if token.pos_ != "NOUN" or not any(_names_it(c) for c in token.children):
        return None
    # Its own "'s" stays outside: a possessor in the question keeps it ("Who was #1's spouse?").
    kept = [c for c in token.children if c.dep_ not in ("acl", "relcl", "punct", "cc", "conj", "appos", "case") or _names_it(c)]
    inside = {token.i} | {t.i for c in kept for t in c.subtree}
    start, end = min(inside), max(inside) + 1
    return (start, end) if len(inside) == end - start else None


def _asking_word(doc):
    """The word the question asks with: the first wh-word outside a relative clause."""
    for token in doc:
        if token.tag_ in WH_TAGS and not any(a.dep_ == "relcl" for a in token.ancestors) and token.dep_ != "relcl":
            return token
    return None


def _cuts(doc, start: int, end: int) -> bool:
    """The span's edges cut a name ("Count Of Ligny's father"), a word ("mother-in-law") or a bracket."""
    if any(e.start < start < e.end or e.start < end < e.end for e in doc.ents):
        return True
    first, last = doc[start], doc[end - 1]
    if start > 0:
        before = doc[start - 1]
        if not before.whitespace_ or (before.is_title and first.is_title and not before.is_sent_start):
            return True
        if before.pos_ == "PROPN" and first.pos_ == "PROPN":
            return True
    if end < len(doc):
        after = doc[end]
        if not last.whitespace_ and (after.is_alpha or after.text == "-"):
            return True
        if after.pos_ == "PROPN" and last.pos_ in ("NOUN", "PROPN"):  # "the movie Breakfast at Tiffany's"
            return True
    text = doc[start:end].text
    return text.count("(") != text.count(")")


def bridge_split(question: str, nlp) -> BridgeSplit | None:
    """The innermost description that can be asked on its own, or None (the question is kept whole)."""
    doc = nlp(question)
    asking = _asking_word(doc)
    if asking is None and not asks_yes_no(question):
        return None  # a keyword query ("the capital of X is known as the") asks for the thing it describes
    answer_type = {asking.head.lower_} if asking is not None and asking.dep_ == "det" else set()  # "which city"
    spans = sorted((span for t in doc if (span := _description(t))), key=lambda s: s[1] - s[0])
    for start, end in spans:
        if asking is not None and start <= asking.i < end:
            continue  # the description holds what the question asks ("what part of Scotland")
        if _cuts(doc, start, end):
            continue
        span = doc[start:end]
        rest = doc[:start].text_with_ws + FIRST_ANSWER + span[-1].whitespace_ + doc[end:].text
        if not content_words(rest.replace(FIRST_ANSWER, " ")) - NAMING - answer_type:
            continue  # nothing left to ask but the thing itself ("What is the capital of France?", "#1 is called what")
        return BridgeSplit(span.text, f"What is {span.text}?", rest)
    return None


MAX_HOPS = 4
# Hops that together name less than this share of the question's content words dropped a condition of it
# ("...uploads data when you git push?" planned without "git push"): chosen on the committed dev plans
# (`python -m benchmarks plan_checks`, bench_results/plan_checks.json).
MIN_COVERAGE = 0.6
PLAN_TOKENS = 96
SLOT_PATTERN = re.compile(r"#(\d+)")
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"hops": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_HOPS}},
    "required": ["hops"],
}
ONE_HOP, CHAIN, PARALLEL = "single", "chain", "parallel"


@dataclass(frozen=True)
class Plan:
    hops: tuple[str, ...]
    note: str = ""  # why the planner's reply was not taken as written

    @property
    def kind(self) -> str:
        """single: one hop; chain: a later hop names an earlier answer; parallel: independent hops."""
        if len(self.hops) == 1:
            return ONE_HOP
        return CHAIN if any(SLOT_PATTERN.search(h) for h in self.hops) else PARALLEL

    def filled(self, index: int, answers: Sequence[str]) -> str:
        """Hop `index` with every `#n` replaced by hop n's answer."""
        return SLOT_PATTERN.sub(lambda m: answers[int(m.group(1)) - 1], self.hops[index])

    def record(self) -> dict[str, Any]:
        return {"hops": list(self.hops), "kind": self.kind} | ({"note": self.note} if self.note else {})


def one_hop(question: str, note: str = "") -> Plan:
    return Plan((question,), note)


def parse_plan(question: str, reply: str) -> Plan:
    """The planner's JSON as a plan, or the question as one hop (with the reason)."""
    try:
        hops = json.loads(reply).get("hops")
    except (json.JSONDecodeError, AttributeError):
        return one_hop(question, "the plan was not JSON")
    if not isinstance(hops, list) or not hops or not all(isinstance(h, str) and h.strip() for h in hops):
        return one_hop(question, "the plan had no hops")
    hops = [" ".join(h.split()) for h in hops]
    if len(hops) > MAX_HOPS:
        return one_hop(question, f"the plan had {len(hops)} hops (at most {MAX_HOPS})")
    asked = content_words(question)
    for i, hop in enumerate(hops):
        if any(not 1 <= int(n) <= i for n in SLOT_PATTERN.findall(hop)):
            return one_hop(question, f"hop {i + 1} names an answer not known before it")
        if not content_words(SLOT_PATTERN.sub(" ", hop)) & asked:  # a worked example copied, or a question of its own
            return one_hop(question, f"hop {i + 1} asks about nothing the question names")
    if len(hops) == 1:
        return one_hop(question)  # one hop: the question as asked, not the planner's rewording
    asks = [frozenset(content_words(SLOT_PATTERN.sub(" ", hop))) for hop in hops]
    if len(set(asks)) < len(asks):
        again = next(i for i, a in enumerate(asks) if asks.index(a) != i)
        return one_hop(question, f"hops {asks.index(asks[again]) + 1} and {again + 1} ask the same thing")
    if (coverage := plan_coverage(question, hops)) < MIN_COVERAGE:
        return one_hop(question, f"the hops name {coverage:.0%} of what the question says (under {MIN_COVERAGE:.0%})")
    return Plan(tuple(hops))


def plan_coverage(question: str, hops: Sequence[str]) -> float:
    """The share of the question's content words that some hop names."""
    asked = content_words(question)
    named = set().union(*(content_words(SLOT_PATTERN.sub(" ", hop)) for hop in hops))
    return len(asked & named) / len(asked) if asked else 1.0


def make_plan(llm: LLM, question: str) -> Plan:
    prompt = plan_prompt(question)
    if hasattr(llm, "generate_json"):
        reply = llm.generate_json(prompt, PLAN_SCHEMA, PLAN_TOKENS)
    else:  # a backend without grammars: the schema is asked for in the rules, and checked here
        reply = llm.generate(prompt, max_new_tokens=PLAN_TOKENS, stop=("\n\n",)).text
    return parse_plan(question, reply)
