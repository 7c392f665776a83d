"""Shared text vocabulary: words, stopwords, sentences, entity mentions.

The ground floor every room reads from (evidence, agent, index, extract, stages), so matching the
same words the same way never needs an import from a room above.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or is was were are be been being what which who whom whose "
    "where when why how did does do that this these those it its as than then both either also has have had "
    "his her their there into about same more most many much one two".split()
)
# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) before whitespace and an
# upper-case letter, digit or opening quote. Common abbreviations are not boundaries.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "no", "mt", "ft", "inc", "co", "ltd", "u.s", "e.g", "i.e"}
# The cheap split for a passage's lead: any . ! ? before whitespace.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


YES_NO = frozenset({"yes", "no"})
_POLAR = re.compile(r"^\W*(is|are|was|were|am|do|does|did|has|have|had|can|could|will|would|should|shall|may|might|must)\b", re.I)


def asks_yes_no(question: str) -> bool:
    """A polar question ("Are X and Y from the same country?"): the only kind a yes or a no answers."""
    return bool(_POLAR.match(question))


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def states(text: str, answer: str) -> bool:
    """Whether `text` says `answer` (both normalised; whole words)."""
    said, wanted = f" {normalize_answer(text)} ", normalize_answer(answer)
    return bool(wanted) and f" {wanted} " in said


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in STOPWORDS and len(w) > 1}


def overlap(query_words: set[str], text: str) -> float:
    """Share of the query's content words that `text` contains."""
    if not query_words:
        return 0.0
    return len(query_words & content_words(text)) / len(query_words)


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


def first_sentence(text: str, limit: int) -> str:
    return _SENTENCE_END.split(text, maxsplit=1)[0][:limit]


@lru_cache(maxsize=4096)
def _pattern(entity: str) -> re.Pattern[str]:
    # Word boundaries, not substrings: "Art" must not match "Arthur".
    return re.compile(r"(?<!\w)" + re.escape(entity.casefold()) + r"(?!\w)")


def mentions(text: str, entity: str) -> bool:
    return bool(entity.strip()) and _pattern(entity.strip()).search(text.casefold()) is not None


_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")


def bare_title(title: str) -> str:
    """A page title without its disambiguating aside: "Pronghorn (animal)" -> "Pronghorn"."""
    return _QUALIFIER.sub("", title).strip()


def title_surfaces(title: str) -> list[str]:
    """How running text writes a page's title: "Closer (magazine)" is written "Closer" too."""
    return list(dict.fromkeys(t for t in (title.strip(), bare_title(title)) if len(t) > 1))


def title_match(title: str, entity: str) -> float:
    """How much a title is the entity's own name: 1 when it is the name ("Cypress"), 0.5 when it is
    the name with a disambiguating aside ("Dusty Drake (album)"), 0 when it only contains it
    ("Cypress-pine", "Ballota undulata"): an encyclopedia's page about X is titled X."""
    name = _WORD.findall(entity.casefold())
    if not name:
        return 0.0
    if _WORD.findall(title.casefold()) == name:
        return 1.0
    return 0.5 if _WORD.findall(bare_title(title).casefold()) == name else 0.0


def mention_offsets(text: str, entity: str) -> list[int]:
    """Where `entity` starts in casefolded `text`, as whole words."""
    entity = entity.strip()
    return [m.start() for m in _pattern(entity).finditer(text.casefold())] if entity else []
