"""A passage as the units a reader reads and a quote names: a sentence of a paragraph; a list item with the
lines it wraps onto, a table row and a code line, each whole. A first read keeps the units near the
question's words, which on documentation answered as well in fewer prompt tokens (bench_results/
search_read_npm_readfirst.json: one read of the search's top 3 passages, 15 of 20 right cut to those
units and the one after each, 14 whole, at 339 vs 402 prompt tokens)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge
from enrich_rag.text import content_words, split_sentences

# What the reader is shown: whole passages, and the evidence tree's facts as one-line facts.
Evidence = Passage | Edge

_FENCE = re.compile(r"^\s*(```|~~~)")
# A unit of its own: a list item (with the lines it wraps onto), a table row, an option or a field line.
_ITEM = re.compile(r"^\s*([-*+•]\s|\d+[.)]\s|\|)")
_CODE = re.compile(r"^(\s{4,}|\t|\$ )")


def evidence_text(source: Evidence) -> str:
    return source.content if isinstance(source, Passage) else source.evidence


def reading_line(source: Evidence) -> str:
    """How the reader sees it: a passage whole (title: text), a fact as one short line."""
    return source.content if isinstance(source, Passage) else f"Fact: {source.subject} | {source.relation} | {source.object}"


def lines_of(text: str) -> Iterator[str]:
    """A passage's units, whitespace made single: a list item with the lines it wraps onto, a table row,
    a code line, each whole; a paragraph of prose cut into sentences."""
    fenced = False
    paragraph: list[str] = []
    item: list[str] = []

    def flush() -> Iterator[str]:
        if item:
            yield " ".join(" ".join(item).split())
        if paragraph:
            yield from split_sentences(" ".join(" ".join(paragraph).split()))
        item.clear()
        paragraph.clear()

    for line in text.splitlines():
        if _FENCE.match(line):
            yield from flush()
            fenced = not fenced
        elif not line.strip():
            yield from flush()
        elif fenced or (_CODE.match(line) and not item):
            yield from flush()
            yield " ".join(line.split())
        elif _ITEM.match(line):
            yield from flush()
            item.append(line)
        else:
            (item or paragraph).append(line)
    yield from flush()


def near_question(passage: Passage, question: str, after: int) -> Passage:
    """The passage cut to its units that share a word with the question, each with the `after` units
    that follow it (where an option's or a heading's answer is written); its title stays. A passage none
    of whose units shares a word is kept whole (`after` < 0: every passage whole)."""
    if after < 0:
        return passage
    words = content_words(question)
    units = list(lines_of(passage.text))
    keep = {j for i, unit in enumerate(units) if words & content_words(unit) for j in range(i, min(len(units), i + 1 + after))}
    return dataclasses.replace(passage, text="\n".join(units[i] for i in sorted(keep))) if keep else passage
