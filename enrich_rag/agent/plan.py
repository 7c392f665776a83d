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
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import plan_prompt
from enrich_rag.text import content_words

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
