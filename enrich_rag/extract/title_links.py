"""Mentions of the corpus's own page titles in a chunk's text: entity linking against the titles.

An NER model splits "the 1936 Summer Olympics" into a date and an event, so the mention never meets
the node of the page titled "1936 Summer Olympics", and the graph loses the one link a second hop
needs. A chunk that writes a title word for word (case and all) names that page; the link costs a
dictionary lookup per word and no model, and it works the same under every extractor.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from enrich_rag.extract.base import Extraction, Extractor, Mention
from enrich_rag.storage.ids import normalize_name
from enrich_rag.storage.passages import Passage
from enrich_rag.text import STOPWORDS, split_sentences, title_surfaces

TITLE_TYPE = "TOPIC"
MIN_CHARS = 3
_WORD = re.compile(r"\w+", re.UNICODE)


def _linkable(title: str) -> bool:
    """Titles a text can name unambiguously: a capital or digit in them ("Pronghorn", not "pronghorn"),
    not a lone stopword."""
    words = _WORD.findall(title)
    return (
        len(title) >= MIN_CHARS
        and bool(words)
        and any(ch.isupper() or ch.isdigit() for ch in title)
        and not (len(words) == 1 and words[0].casefold() in STOPWORDS)
    )


class TitleGazetteer:
    """Every page title and its bare form ("Robert Palmer (singer)" -> "Robert Palmer"), by first word."""

    def __init__(self, titles: Iterable[str]):
        self._by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._titles: dict[str, list[str]] = {}  # surface -> the titles written so
        seen: set[tuple[str, ...]] = set()
        for title in titles:
            for surface in title_surfaces(title):
                if not _linkable(surface):
                    continue
                self._titles.setdefault(surface, []).append(title)
                words = tuple(_WORD.findall(surface))
                if words not in seen:
                    seen.add(words)
                    self._by_first.setdefault(words[0], []).append((words, surface))
        for candidates in self._by_first.values():
            candidates.sort(key=lambda c: -len(c[0]))  # the longest title that matches wins

    def __len__(self) -> int:
        return sum(len(c) for c in self._by_first.values())

    def find(self, text: str) -> list[tuple[int, str]]:
        """(character offset, title) of every title written in `text`, longest first, not overlapping."""
        tokens = list(_WORD.finditer(text))
        words = [t.group() for t in tokens]
        found, i = [], 0
        while i < len(words):
            match = next(
                ((title, surface) for title, surface in self._by_first.get(words[i], ()) if tuple(words[i : i + len(title)]) == title), None
            )
            if match is None:
                i += 1
                continue
            found.append((tokens[i].start(), match[1]))
            i += len(match[0])
        return found

    def named_titles(self, text: str) -> list[str]:
        """The titles of the pages `text` names, in the order it names them, each once."""
        return list(dict.fromkeys(title for _, surface in self.find(text) for title in self._titles.get(surface, ())))

    def mentions(self, chunks: Iterable[Passage]) -> list[Mention]:
        """Title mentions in each chunk, other than its own title (its extractor already links that)."""
        out = []
        for chunk in chunks:
            own = {normalize_name(t) for t in title_surfaces(chunk.title)}
            sentences = _sentence_starts(chunk.text)
            for offset, title in self.find(chunk.text):
                if normalize_name(title) not in own:
                    sentence = next((s for start, s in reversed(sentences) if start <= offset), sentences[0][1])
                    out.append(Mention(title, TITLE_TYPE, chunk.id, sentence=sentence, alias=title, doc_id=chunk.doc_id))
        return out


def _sentence_starts(text: str) -> list[tuple[int, str]]:
    starts, at = [], 0
    for sentence in split_sentences(text):
        at = text.find(sentence, at)
        starts.append((max(at, 0), sentence))
    return starts or [(0, text)]  # never empty: a mention always has a sentence


class TitleLinkingExtractor:
    """An extractor whose output also holds the title mentions of the chunks it read: enrichment links
    new chunks to the corpus's pages exactly as the build did."""

    def __init__(self, inner: Extractor, gazetteer: TitleGazetteer):
        self.inner, self.gazetteer, self.name = inner, gazetteer, inner.name

    @property
    def nlp(self):
        return self.inner.nlp  # AttributeError where the inner extractor has no spaCy, as hasattr expects

    def extract(self, chunks: list[Passage]) -> Extraction:
        out = self.inner.extract(chunks)
        out.mentions.extend(self.gazetteer.mentions(chunks))
        return out
