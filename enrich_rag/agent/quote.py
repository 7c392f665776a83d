"""The line an answer came from: the sentence, list item or code line of what was read that states it.

Matched in the evidence the answer was read from, with no reader call, so a user sees at once whether
the answer is written in their documents (and where) or is the reader's guess. A line that states the
answer separates right from wrong answers better than the reader's perplexity (bench_results/
search_read_*.json, `quote_vs_sure`): that is what `sure` shows where no confidence model was fitted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from enrich_rag.agent.sufficiency import Evidence
from enrich_rag.storage.passages import Passage
from enrich_rag.text import YES_NO, content_words, normalize_answer, overlap, split_sentences, states

# A line read whole, never cut into sentences: a list item, an option or a code line, a table row.
_WHOLE_LINE = re.compile(r"^\s*([-*+•|>]|\d+[.)]\s|`|\$ |\S+\s*[:=]\s|--?\w)")
_INDENTED = re.compile(r"^(\s{4,}|\t)")


@dataclass(frozen=True)
class Quote:
    text: str  # the line as written in the passage (a substring of it)
    chunk_id: str
    doc_id: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def lines_of(text: str) -> Iterator[str]:
    """A passage's units: list items, option and code lines whole; prose cut into sentences."""
    for line in text.splitlines():
        if not line.strip():
            continue
        if _WHOLE_LINE.match(line) or _INDENTED.match(line):
            yield line.strip()
        else:
            yield from split_sentences(line)


def quote(answer: str, evidence: Sequence[Evidence], question: str) -> Quote | None:
    """The unit of what was read that states `answer` and shares the most of the question's words (the
    first in reading order on a tie); None when no line states it (a yes or a no is stated by none)."""
    if not normalize_answer(answer) or normalize_answer(answer) in YES_NO:
        return None
    asked = content_words(question)
    best: tuple[float, int, Quote] | None = None
    order = 0
    for source in evidence:
        if isinstance(source, Passage):
            units, chunk, doc = list(lines_of(source.text)), source.id, source.doc_id
        else:
            units, chunk, doc = [source.evidence], source.chunk_id, source.doc_id
        for unit in units:
            order -= 1
            if states(unit, answer) and (best is None or (overlap(asked, unit), order) > best[:2]):
                best = (overlap(asked, unit), order, Quote(unit, chunk, doc))
    return best[2] if best else None
