"""Sentence-boundary chunking with no overlap.

Chunks never cross a section, never split a sentence unless that sentence alone exceeds the size,
and get ids from their document and position so a rebuild with the same params gives the same ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from enrich_rag.ingest.documents import Document

# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) before whitespace and an
# upper-case letter, digit or opening quote. Common abbreviations are not boundaries.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "no", "mt", "ft", "inc", "co", "ltd", "u.s", "e.g", "i.e"}


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    title: str
    section: str
    position: int
    text: str


def split_sentences(text: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        candidate = text[start : match.start()].rstrip()
        last_word = candidate.rsplit(None, 1)[-1].rstrip(".").lower() if candidate.split() else ""
        if last_word in _ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha()):
            continue  # "Dr. Who", "J. R. R. Tolkien"
        sentences.append(text[start : match.end()].strip())
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return [s for s in sentences if s]


def _split_long(sentence: str, size: int) -> list[str]:
    """A sentence longer than the chunk size is cut at the last space before the limit."""
    parts = []
    while len(sentence) > size:
        cut = sentence.rfind(" ", 0, size)
        cut = cut if cut > 0 else size
        parts.append(sentence[:cut].strip())
        sentence = sentence[cut:].strip()
    if sentence:
        parts.append(sentence)
    return parts


def chunk_document(doc: Document, chunk_size: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    for section in doc.sections:
        pieces = [p for s in split_sentences(section.text) for p in _split_long(s, chunk_size)]
        current: list[str] = []
        length = 0
        for piece in pieces:
            added = len(piece) + (1 if current else 0)
            if current and length + added > chunk_size:
                chunks.append(_make_chunk(doc, section.heading, len(chunks), " ".join(current)))
                current, length = [], 0
                added = len(piece)
            current.append(piece)
            length += added
        if current:
            chunks.append(_make_chunk(doc, section.heading, len(chunks), " ".join(current)))
    return chunks


def _make_chunk(doc: Document, section: str, position: int, text: str) -> Chunk:
    return Chunk(f"{doc.doc_id}::c{position}", doc.doc_id, doc.title, section, position, text)
