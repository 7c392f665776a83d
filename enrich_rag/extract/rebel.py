"""REBEL (Babelscape/rebel-large): seq2seq relation extraction with a triplet markup.

REBEL writes `<triplet> head <subj> tail <obj> relation`, and repeats `<subj> tail <obj> relation`
for further tails of the same head. transformers 5 has no text2text pipeline, so generation goes
through `AutoModelForSeq2SeqLM.generate` and decoding keeps the special tokens the markup needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from enrich_rag.config import ExtractionConfig
from enrich_rag.errors import ModelLoadError
from enrich_rag.extract.base import Extraction, Mention
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge
from enrich_rag.text import split_sentences

REBEL_CONFIDENCE = 0.9
_STRIP = ("<s>", "</s>", "<pad>")


@dataclass(frozen=True)
class RebelTriplet:
    head: str
    relation: str
    tail: str


def parse_rebel_output(text: str) -> list[RebelTriplet]:
    for token in _STRIP:
        text = text.replace(token, " ")
    triplets: list[RebelTriplet] = []
    head = tail = relation = ""
    field = None

    def flush() -> None:
        if head.strip() and tail.strip() and relation.strip():
            triplets.append(RebelTriplet(head.strip(), relation.strip(), tail.strip()))

    for token in text.split():
        if token == "<triplet>":
            flush()
            head, tail, relation, field = "", "", "", "head"
        elif token == "<subj>":
            if relation:  # another tail for the same head
                flush()
            tail, relation, field = "", "", "tail"
        elif token == "<obj>":
            relation, field = "", "relation"
        elif field == "head":
            head += " " + token
        elif field == "tail":
            tail += " " + token
        elif field == "relation":
            relation += " " + token
    flush()
    return list(dict.fromkeys(triplets))


def load_rebel(model_name_or_path: str):
    try:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - transformers is a core dependency
        raise ModelLoadError("transformers is not installed") from exc
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
        model = AutoModelForSeq2SeqLM.from_pretrained(model_name_or_path)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(
            f"cannot load REBEL model '{model_name_or_path}': set extraction.rebel_model to a local folder (no hub access here)"
        ) from exc
    model.eval()
    return tokenizer, model


class RebelExtractor:
    name = "rebel"

    def __init__(self, config: ExtractionConfig, tokenizer=None, model=None, max_new_tokens: int = 128, num_beams: int = 3):
        self.config = config
        if tokenizer is None or model is None:
            tokenizer, model = load_rebel(config.rebel_model)
        self.tokenizer, self.model = tokenizer, model
        self.max_new_tokens, self.num_beams = max_new_tokens, num_beams

    def generate(self, sentences: list[str]) -> list[str]:
        import torch

        inputs = self.tokenizer(sentences, return_tensors="pt", padding=True, truncation=True, max_length=256)
        inputs.pop("token_type_ids", None)
        with torch.no_grad():
            output = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, num_beams=self.num_beams)
        return self.tokenizer.batch_decode(output, skip_special_tokens=False)

    def extract(self, chunks: list[Passage]) -> Extraction:
        out = Extraction()
        work = [(c, i, s) for c in chunks for i, s in enumerate(split_sentences(c.text))]
        for start in range(0, len(work), self.config.batch_size):
            batch = work[start : start + self.config.batch_size]
            for (chunk, index, sentence), decoded in zip(batch, self.generate([s for _, _, s in batch])):
                for t in parse_rebel_output(decoded):
                    out.mentions += [
                        Mention(n, "ENTITY", chunk.id, sentence=sentence, alias=n, doc_id=chunk.doc_id) for n in (t.head, t.tail)
                    ]
                    out.edges.append(
                        Edge(
                            t.head,
                            t.relation,
                            t.tail,
                            evidence=sentence,
                            chunk_id=chunk.id,
                            doc_id=chunk.doc_id,
                            sentence_index=index,
                            confidence=REBEL_CONFIDENCE,
                            extractor=self.name,
                        )
                    )
        return out
