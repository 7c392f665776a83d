"""Sentence-boundary chunking with no overlap.

Chunks never cross a section, never split a sentence unless that sentence alone exceeds the size,
and get ids from their document and position so a rebuild with the same params gives the same ids.
"""

from __future__ import annotations

from enrich_rag.ingest.documents import Document
from enrich_rag.storage.passages import Passage
from enrich_rag.text import split_sentences


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


def chunk_document(doc: Document, chunk_size: int) -> list[Passage]:
    chunks: list[Passage] = []
    for section in doc.sections:
        pieces = [p for s in split_sentences(section.text) for p in _split_long(s, chunk_size)]
        current: list[str] = []
        length = 0
        for piece in pieces:
            added = len(piece) + (1 if current else 0)
            if current and length + added > chunk_size:
                chunks.append(_make_chunk(doc, section.heading, len(chunks), text=" ".join(current)))
                current, length = [], 0
                added = len(piece)
            current.append(piece)
            length += added
        if current:
            chunks.append(_make_chunk(doc, section.heading, len(chunks), text=" ".join(current)))
    return chunks


def _make_chunk(doc: Document, section: str, position: int, text: str) -> Passage:
    return Passage(f"{doc.doc_id}::c{position}", doc.doc_id, doc.title, text=text, section=section, position=position)
