"""The line an answer came from: the sentence, list item or code line of what was read that states it.

Matched in the evidence the answer was read from, with no reader call, so a user sees at once whether
the answer is written in their documents (and where) or is the reader's guess. It is shown beside
`sure`, not as it: on the npm folder (dev) 10 of 15 answers a line stated were right and 1 of 5 others,
where the perplexity rule called none sure; on the held-out Click folder 10 of 19 stated answers were
right and 2 of 3 others, where the perplexity rule called 3 sure, all right (bench_results/
search_read_*.json, `quote_vs_sure_default`). A line that states it does not make an answer right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from enrich_rag.evidence.lines import Evidence, lines_of
from enrich_rag.storage.passages import Passage
from enrich_rag.text import YES_NO, content_words, normalize_answer, overlap, states


@dataclass(frozen=True)
class Quote:
    text: str  # the line as written in the passage, its whitespace made single
    chunk_id: str
    doc_id: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
