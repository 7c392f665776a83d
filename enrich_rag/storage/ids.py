"""Entity identity: names are normalised so that case, punctuation and articles do not split a node."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_POSSESSIVE = re.compile(r"['’]s\b")
_NON_WORD = re.compile(r"[^\w\s]", re.UNICODE)
_SPACES = re.compile(r"\s+")
_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+")


def normalize_name(name: str) -> str:
    """'The Beatles' / 'the beatles.' / 'THE BEATLES's' -> 'beatles'."""
    text = unicodedata.normalize("NFKC", name).casefold().strip()
    text = _POSSESSIVE.sub("", text)
    text = _NON_WORD.sub(" ", text)
    text = _SPACES.sub(" ", text).strip()
    stripped = _LEADING_ARTICLE.sub("", text)
    return stripped or text


def node_id(name: str) -> str:
    return "n" + hashlib.sha1(normalize_name(name).encode("utf-8")).hexdigest()[:16]


def edge_id(src: str, relation: str, dst: str, chunk_id: str, sentence: int) -> str:
    key = f"{src}\x00{relation}\x00{dst}\x00{chunk_id}\x00{sentence}"
    return "e" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]
