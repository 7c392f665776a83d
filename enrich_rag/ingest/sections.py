"""A document as titled sections: what every reader (markdown, HTML, Word, reStructuredText, PDF,
JSONL, a string) produces and chunking reads."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    heading: str
    text: str


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    sections: tuple[Section, ...]
    source: str

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.sections)


def stable_doc_id(title: str, text: str) -> str:
    return "d" + hashlib.sha1(f"{title}\x00{text}".encode()).hexdigest()[:12]


def sectioned(blocks: Iterable[tuple[int, str]]) -> tuple[str | None, tuple[Section, ...]]:
    """Blocks in reading order (a heading's level 1-6 and text, or 0 and body text) as sections under
    their headings; the first level-1 heading is the title."""
    title: str | None = None
    sections: list[Section] = []
    heading, body = "", list[str]()
    for level, text in blocks:
        if not level:
            body.append(text)
            continue
        if "".join(body).strip():
            sections.append(Section(heading, "\n".join(body).strip()))
        body, heading = [], text.strip()
        if title is None and level == 1:
            title = heading
    if "".join(body).strip():
        sections.append(Section(heading, "\n".join(body).strip()))
    return title, tuple(sections)


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---[ \t]*(\n|\Z)", re.S)
_FRONT_TITLE = re.compile(r"^title:\s*['\"]?(.+?)['\"]?\s*$", re.M)


def split_markdown_sections(text: str) -> tuple[str | None, tuple[Section, ...]]:
    """Split markdown at its `#` headings; the title is its front matter's `title:`, else the first
    level-1 heading. A `#` line inside fenced code is code (a shell comment), not a heading, and the
    front matter is metadata, not a section."""
    front_title = None
    if front := _FRONT_MATTER.match(text):
        found = _FRONT_TITLE.search(front.group(1))
        front_title, text = (found.group(1) if found else None), text[front.end() :]

    def blocks() -> Iterable[tuple[int, str]]:
        fenced = False
        for line in text.splitlines():
            fenced ^= bool(_FENCE.match(line))
            heading = None if fenced else _HEADING.match(line)
            yield (len(heading.group(1)), heading.group(2)) if heading else (0, line)

    title, sections = sectioned(blocks())
    return front_title or title, sections
