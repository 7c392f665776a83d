"""A question kept whole that names a thing only by a description ("Who plays Marty's girlfriend in
Back to the Future?"): the description as a hop of its own, and the question with `#1` in its place.

The 1.5B planner keeps many two-hop questions as one hop, and the reader then often answers with the
thing the question only describes (the girlfriend, not the actress). spaCy's parse finds the
description without a model call: the innermost common noun described through a name, by an of-phrase
("the director of Inception"), a possessive ("FleetBoston Financial's purchaser") or a relative clause
("the film that won the 1998 Palme d'Or"). The loop reads it as a hop only to check whether the whole
read stopped at that bridge (agent/chain.py, `agent.bridge_check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
