"""Date comparisons ("Who was born first, A or B?") read one side at a time and decided in code.

Asked to compare, the 1.5B reader picks a side at about chance (2Wiki dev 100, comparison and
bridge-comparison questions: 24 of 50 right; the same two gold passages in the other order flip its
answer), while it reads a single date from a passage well. So a question that compares two named
things by when something happened becomes two short questions over the same context ("When was A
born?", "When was the director of B born?"), and the earlier or later year picks the side. When a
year is missing on either side, or both are the same, the reader's own answer stands.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.llm.base import LLM
from enrich_rag.llm.reader import always, read

EARLIER = {"first", "earlier", "earliest", "older", "oldest", "sooner"}
LATER = {"later", "latest", "last", "younger", "youngest", "recently"}
# The comparison word ends a comma-free stem; then ", A or B?" (A may hold commas: "Home, James (Film)").
_DIRECTION = r"^(?P<stem>[^,]*?\b(?P<direction>" + "|".join(sorted(EARLIER | LATER)) + r")\b"
_QUESTIONS = (
    re.compile(_DIRECTION + r"[^,]*),\s*(?P<a>.+?)\s+or\s+(?P<b>.+?)\s*\?*\s*$", re.IGNORECASE),
    re.compile(_DIRECTION + r"[^,]*?)\s+(?:out of|between|of)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s*\?*\s*$", re.IGNORECASE),
)
_ROLES = ("director", "composer", "performer", "author", "writer", "producer", "creator", "founder")
# Event words of the stem -> the question asked of each side ({x}: the side, with its role if any).
_EVENTS = (
    (("died", "death", "die"), "When did {x} die?"),
    (("born", "birth"), "When was {x} born?"),
    (("came out", "come out", "released", "release"), "When was {x} released?"),
    (("established", "founded", "formed", "started", "created", "opened", "launched"), "When was {x} founded?"),
    (("published", "written"), "When was {x} published?"),
    (("premiered", "aired", "broadcast"), "When did {x} premiere?"),
)
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    earlier: bool  # the side whose event came first is the answer
    template: str  # the question asked of each side

    def ask(self, side: str) -> str:
        return self.template.format(x=side)


def parse_comparison(question: str) -> Comparison | None:
    """A comparison of two named things by the date of one event, or None."""
    text = " ".join(question.split())
    match = next((m for pattern in _QUESTIONS if (m := pattern.match(text))), None)
    if not match:
        return None
    stem = match["stem"].lower()
    template = next((t for words, t in _EVENTS if any(re.search(rf"\b{w}\b", stem) for w in words)), None)
    role = next((r for r in _ROLES if re.search(rf"\b{r}\b", stem)), None)
    if template is None and re.search(r"\b(older|younger|oldest|youngest)\b", stem):  # of people: born; of things: founded
        template = "When was {x} born?" if role or stem.startswith("who") else "When was {x} founded?"
    if template is None:
        return None
    if role:
        template = template.replace("{x}", f"the {role} of {{x}}")
    a, b = _unquoted(match["a"]), _unquoted(match["b"])
    return Comparison(a, b, match["direction"].lower() in EARLIER, template=template) if a and b and a.lower() != b.lower() else None


def _unquoted(side: str) -> str:
    side = side.strip()
    return side[1:-1].strip() if len(side) > 1 and side[0] == side[-1] and side[0] in "\"'" else side


def first_year(text: str) -> int | None:
    found = _YEAR.search(text)
    return int(found.group(1)) if found else None


@dataclass
class Compared:
    answer: str | None  # the side chosen, or None: the reader's own answer stands
    asked: dict[str, str] = field(default_factory=dict)  # sub-question -> the reader's reply

    def record(self) -> dict[str, Any]:
        return {"answer": self.answer, "asked": self.asked}


def compare(
    llm: LLM, comparison: Comparison, lines: list[str], max_new_tokens: int, again_fits: Callable[[int], bool] = always
) -> Compared:
    """Read each side's year over the same context (the prompt prefix is shared, so cached) and pick."""
    replies = {
        comparison.ask(side): read(llm, comparison.ask(side), lines, max_new_tokens, again_fits).text.strip()
        for side in (comparison.a, comparison.b)
    }
    year_a, year_b = (first_year(reply) for reply in replies.values())
    if year_a is None or year_b is None or year_a == year_b:
        return Compared(None, replies)
    a_first = year_a < year_b
    return Compared(comparison.a if a_first == comparison.earlier else comparison.b, replies)
