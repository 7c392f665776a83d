"""Deep extraction: the reader model reads one chunk and writes its facts, under a JSON schema.

EnrichGraph's extractor (`extraction.deep: llm`): the seed is spaCy over every chunk (wide, cheap);
this reads only the chunks a question needs. On llama.cpp the reply is constrained by the schema (a
grammar), so every reply parses; other backends are asked the same and parsed leniently (a reply that
does not parse gives no facts, never an error). A fact is kept only when the chunk writes both its
subject (the title counts) and its object, and its evidence is the chunk's sentence that names them:
the model proposes, the text decides (a small model copies its worked example; this drops it).
Names go through the same assembly as every extractor's (node ids, title forms).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from enrich_rag.extract.base import Extraction, Mention
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge
from enrich_rag.text import mentions, split_sentences

DEEP_CONFIDENCE = 0.9
MAX_FACTS = 6
MAX_NAME_CHARS = 80
MAX_RELATION_CHARS = 32


def fact_schema(max_facts: int = MAX_FACTS) -> dict[str, Any]:
    """A fact is a [subject, relation, object] triple, not an object with named keys: the keys cost a
    small model about a third of its reply's tokens, and decoding is most of deep extraction's time,
    which is also why the facts per chunk and a relation's length are capped (the rules ask for "a few
    words"; longer relations were clauses copied from the passage)."""
    name = {"type": "string", "maxLength": MAX_NAME_CHARS}
    relation = {"type": "string", "maxLength": MAX_RELATION_CHARS}
    triple = {"type": "array", "prefixItems": [name, relation, name], "minItems": 3, "maxItems": 3}
    return {
        "type": "object",
        "properties": {"facts": {"type": "array", "maxItems": max_facts, "items": triple}},
        "required": ["facts"],
        "additionalProperties": False,
    }


FIELDS = ("subject", "relation", "object")


def parse_facts(text: str, max_facts: int = MAX_FACTS) -> list[dict[str, str]]:
    """The facts of one reply; anything that is not the schema's shape is dropped."""
    start = text.find("{")
    try:
        data = json.loads(text[start:]) if start >= 0 else {}
    except json.JSONDecodeError:
        return []
    facts = data.get("facts") if isinstance(data, dict) else None
    out = []
    for f in facts if isinstance(facts, list) else []:
        if isinstance(f, list) and len(f) == len(FIELDS) and all(isinstance(v, str) and v.strip() for v in f):
            out.append({k: " ".join(v.split())[:MAX_NAME_CHARS] for k, v in zip(FIELDS, f)})
    return out[:max_facts]


def evidence_sentence(text: str, subject: str, obj: str) -> str | None:
    """The chunk's sentence naming both, else the one naming the object; None unless the text writes both."""
    if not (mentions(text, subject) and mentions(text, obj)):
        return None
    sentences = split_sentences(text) or [text]
    return next((s for s in sentences if mentions(s, subject) and mentions(s, obj)), None) or next(
        (s for s in sentences if mentions(s, obj)), None
    )


class LLMExtractor:
    """`llm`: any backend; one with `generate_json` (llama.cpp) is held to the schema. `prompt`: the
    fact prompt (`llm.prompts.fact_prompt`), passed in so extraction does not depend on the LLM layer."""

    name = "llm"

    def __init__(self, llm, prompt: Callable[[str, str], Any], max_facts: int = MAX_FACTS, max_new_tokens: int = 256):
        self.llm, self.prompt, self.max_new_tokens = llm, prompt, max_new_tokens
        self.max_facts, self.schema = max_facts, fact_schema(max_facts)
        self.replies = self.unparsed = 0  # how often a reply gave no usable JSON (schema-bound: never)

    def _reply(self, chunk: Passage) -> str:
        prompt = self.prompt(chunk.title, chunk.text)
        if hasattr(self.llm, "generate_json"):
            return self.llm.generate_json(prompt, self.schema, self.max_new_tokens)
        return self.llm.generate(prompt, max_new_tokens=self.max_new_tokens, stop=("\n\n",)).text

    def extract(self, chunks: list[Passage]) -> Extraction:
        out = Extraction()
        for chunk in chunks:
            reply = self._reply(chunk)
            self.replies += 1
            facts = parse_facts(reply, self.max_facts)
            if not facts and '"facts"' not in reply:
                self.unparsed += 1
            text = f"{chunk.title}. {chunk.text}" if chunk.title else chunk.text
            for sent_index, fact in enumerate(facts):
                sentence = evidence_sentence(text, fact["subject"], fact["object"])
                if sentence is None:
                    continue  # the model named something the chunk never writes
                for name in (fact["subject"], fact["object"]):
                    out.mentions.append(Mention(name, "LLM", chunk.id, sentence=sentence, alias=name, doc_id=chunk.doc_id))
                out.edges.append(
                    Edge(
                        fact["subject"],
                        fact["relation"],
                        fact["object"],
                        evidence=sentence,
                        chunk_id=chunk.id,
                        doc_id=chunk.doc_id,
                        sentence_index=sent_index,
                        confidence=DEEP_CONFIDENCE,
                        extractor=self.name,
                    )
                )
        return out
