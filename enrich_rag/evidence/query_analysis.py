"""Query analysis: which entities a question names, what kind of question it is, and its parts.

Entities come from three places, because each misses some: spaCy NER, proper-noun chunks (NER
misses film and song titles), and names of graph nodes that occur in the question verbatim.
The kind decides what the selector does: comparison questions are split into one part per entity
(each needs its own passage); bridge questions look for an intermediate entity in the evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from enrich_rag.errors import EnrichRagError
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.ids import node_id
from enrich_rag.text import STOPWORDS, content_words

MAX_QUESTION_CHARS = 2000
SINGLE_HOP, BRIDGE, COMPARISON = "single_hop", "bridge", "comparison"
SKIP_LABELS = {"CARDINAL", "ORDINAL", "PERCENT", "MONEY", "QUANTITY", "DATE", "TIME"}
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_COMPARATIVE = re.compile(
    r"\b(both|same|either|neither|compare[ds]?|older|younger|earlier|later|first|last|longer|shorter|larger|"
    r"smaller|bigger|higher|lower|more|less|fewer|greater|closer|further|farther|\w+er than)\b",
    re.IGNORECASE,
)
_NESTED = re.compile(r"\b(of the|of a|of an|whose|who|which|that|where|when)\b.*\b(\w+ed|by|of|in|for|with|from)\b", re.IGNORECASE)
# "Are X and Y both ...", "X or Y", "... have in common": two entities asked about side by side.
_PAIRED = re.compile(r"\bor\b|\bin common\b|^(are|were|is|was|do|does|did|have|has)\b.+\band\b", re.IGNORECASE)
_NOUN_CLAUSE = re.compile(r"\b(a|an|the|what|which)\s+(\w+\s+){0,2}(with|of|in|that|which|who|whose|where|by)\b", re.IGNORECASE)
MAX_NGRAM = 6
_ALTERNATIVES = re.compile(r"\s+or\s+")
_TRAILING_FUNCTION_WORDS = re.compile(r"(\s+(of|the|a|an|and|or|in|for|to))+$")  # NER: "the Church of St. Mary of"
_POSSESSIVE = re.compile(r"['’]s?(?=\s|$)")


@dataclass(frozen=True)
class QueryAnalysis:
    question: str
    entities: tuple[str, ...]
    kind: str
    hint: str  # the question's content words outside its entities: the relation asked about
    parts: tuple[str, ...] = field(default=())  # comparison: one sub-query per entity

    def to_dict(self) -> dict:
        return {"entities": list(self.entities), "kind": self.kind, "hint": self.hint, "parts": list(self.parts)}


class QueryError(EnrichRagError):
    pass


def validate_question(question: str) -> str:
    if not isinstance(question, str) or not question.strip():
        raise QueryError("question is empty")
    if "\x00" in question:
        raise QueryError("question contains binary data (NUL bytes)")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes reach Python as lone surrogates (argv, files read with errors)
        raise QueryError("question is not valid UTF-8 text") from None
    if len(question) > MAX_QUESTION_CHARS:
        raise QueryError(f"question is {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
    return " ".join(question.split())


def _proper_spans(doc) -> list[str]:
    # NER reads "Bedknobs and Broomsticks or The Muppet Christmas Carol" as one title: "or" offers two.
    spans = [part for e in doc.ents if e.label_ not in SKIP_LABELS for part in _ALTERNATIVES.split(e.text)]
    for chunk in doc.noun_chunks:
        # A conjunction or comma separates names ("Cypress and Ajuga"); "of the" inside one does not.
        groups: list[list] = [[]]
        for t in chunk:
            if t.pos_ == "CCONJ" or t.text == ",":
                groups.append([])
            elif t.pos_ == "PROPN" or (t.is_title and not t.is_sent_start):
                groups[-1].append(t)
        spans += [doc[g[0].i : g[-1].i + 1].text for g in groups if g]
    return spans


def _graph_names(question: str, store: GraphStore | None) -> list[str]:
    """Question n-grams that are graph node names; single words only when capitalised mid-sentence."""
    if store is None:
        return []
    words = question.rstrip("?.!").split()
    grams: dict[str, str] = {}
    for n in range(MAX_NGRAM, 0, -1):
        for i in range(len(words) - n + 1):
            text = " ".join(words[i : i + n]).strip(",;:'\"()")
            if n == 1 and (i == 0 or not text[:1].isupper() or text.casefold() in STOPWORDS):
                continue
            if n > 1 and not any(w[:1].isupper() for w in words[i : i + n][1 if i == 0 else 0 :]):
                continue
            grams.setdefault(node_id(text), text)
    found = {n["id"] for n in store.nodes_by_ids(list(grams))}
    return [grams[i] for i in grams if i in found]


def _dedupe(names: list[str]) -> list[str]:
    """Keep the longest form: 'Ed Wood' goes when 'Ed Wood (film)' ... is also there, case-insensitively."""
    clean: list[str] = []
    # A possessive ends a name: "Juan Manuel Márquez's WBO" is two names, the owner first.
    pieces = [p for name in names for p in _POSSESSIVE.split(" ".join(name.split()))]
    for name in pieces:
        name = _TRAILING_FUNCTION_WORDS.sub("", name.strip(" ,;:'\"?-")).removeprefix("the ").removeprefix("The ")
        short = len(name.strip(".")) < 3 and not name.isupper()  # "Sr.", "Jr." but not "UK"
        if name and not short and content_words(name) and name.casefold() not in {c.casefold() for c in clean}:
            clean.append(name)
    return [
        n
        for n in clean
        if not any(
            n.casefold() != o.casefold() and re.search(r"(?<!\w)" + re.escape(n.casefold()) + r"(?!\w)", o.casefold()) for o in clean
        )
    ]


def classify(question: str, entities: list[str]) -> str:
    if len(entities) >= 2 and (_COMPARATIVE.search(question) or _PAIRED.search(question)):
        return COMPARISON
    if _NESTED.search(question) or _NOUN_CLAUSE.search(question) or "'s " in question or "’s " in question:
        return BRIDGE
    return SINGLE_HOP


def analyze_query(question: str, nlp, store: GraphStore | None = None) -> QueryAnalysis:
    doc = nlp(question)
    names = [m.group(1) for m in _QUOTED.finditer(question)] + _proper_spans(doc) + _graph_names(question, store)
    entities = _dedupe(names)
    kind = classify(question, entities)
    entity_words = content_words(" ".join(entities))
    hint = " ".join(
        w for w in dict.fromkeys(t.text for t in doc if t.is_alpha) if w.casefold() in content_words(w) and w.casefold() not in entity_words
    )
    parts = tuple(f"{e} {hint}".strip() for e in entities) if kind == COMPARISON else ()
    return QueryAnalysis(question, tuple(entities), kind, hint=hint, parts=parts)
