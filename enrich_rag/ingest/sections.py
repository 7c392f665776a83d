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


def split_markdown_sections(text: str) -> tuple[str | None, tuple[Section, ...]]:
    """Split markdown at its `#` headings; the first level-1 heading becomes the title."""
    return sectioned((len(m.group(1)), m.group(2)) if (m := _HEADING.match(line)) else (0, line) for line in text.splitlines())
