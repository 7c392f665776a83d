"""REBEL: the parser on real REBEL output, and the generation path on a tiny BART trained in the test.

The real Babelscape/rebel-large weights cannot be downloaded here; a 30k-parameter BART with a
word-level tokenizer that knows REBEL's markup tokens is taught one input -> markup pair, so the
extractor's real code (tokenize, generate, decode with special tokens, parse) runs end to end.
"""

import pytest

from enrich_rag.config import ExtractionConfig
from enrich_rag.errors import ModelLoadError
from enrich_rag.extract.rebel import RebelExtractor, RebelTriplet, load_rebel, parse_rebel_output
from enrich_rag.storage.passages import Passage

# Decoded output of Babelscape/rebel-large for the example sentence of its model card
# ("Punta Cana is a resort town in the municipality of Higuey, in La Altagracia Province, ...").
REBEL_CARD_OUTPUT = (
    "<s><triplet> Punta Cana <subj> Higüey <obj> located in the administrative territorial entity "
    "<subj> La Altagracia Province <obj> located in the administrative territorial entity <subj> "
    "Dominican Republic <obj> country <triplet> Higüey <subj> La Altagracia Province <obj> located in "
    "the administrative territorial entity <subj> Dominican Republic <obj> country <triplet> La "
    "Altagracia Province <subj> Dominican Republic <obj> country <triplet> Dominican Republic <subj> "
    "La Altagracia Province <obj> contains administrative territorial entity</s>"
)


def test_parser_reads_multi_tail_triplets_from_real_output():
    triplets = parse_rebel_output(REBEL_CARD_OUTPUT)
    assert triplets[0] == RebelTriplet("Punta Cana", "located in the administrative territorial entity", "Higüey")
    assert RebelTriplet("Punta Cana", "country", "Dominican Republic") in triplets
    assert RebelTriplet("Dominican Republic", "contains administrative territorial entity", "La Altagracia Province") in triplets
    assert len(triplets) == 7


def test_parser_ignores_padding_and_incomplete_triplets():
    text = "<pad><s><triplet> Christopher Nolan <subj> Inception <obj> notable work <triplet> Dangling <subj></s><pad>"
    assert parse_rebel_output(text) == [RebelTriplet("Christopher Nolan", "notable work", "Inception")]
    assert parse_rebel_output("<s></s>") == []


@pytest.fixture(scope="module")
def tiny_rebel():
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BartConfig, BartForConditionalGeneration, PreTrainedTokenizerFast

    words = [
        "<pad>",
        "<s>",
        "</s>",
        "<unk>",
        "<triplet>",
        "<subj>",
        "<obj>",
        "christopher",
        "nolan",
        "directed",
        "inception",
        ".",
        "notable",
        "work",
        "the",
        "film",
    ]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit()])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        additional_special_tokens=["<triplet>", "<subj>", "<obj>"],
    )
    config = BartConfig(
        vocab_size=len(words),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_bos_token_id=1,
    )
    torch.manual_seed(0)
    model = BartForConditionalGeneration(config)
    source = tokenizer(["christopher nolan directed inception ."], return_tensors="pt")
    target = tokenizer(["<s> <triplet> christopher nolan <subj> inception <obj> notable work </s>"], return_tensors="pt").input_ids
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    model.train()
    for _ in range(150):
        loss = model(input_ids=source.input_ids, attention_mask=source.attention_mask, labels=target).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    return tokenizer, model


@pytest.mark.slow  # trains a tiny BART
def test_generation_path_end_to_end_on_a_tiny_bart(tiny_rebel):
    tokenizer, model = tiny_rebel
    extractor = RebelExtractor(ExtractionConfig(extractor="rebel"), tokenizer=tokenizer, model=model, max_new_tokens=16, num_beams=2)
    decoded = extractor.generate(["christopher nolan directed inception ."])
    assert "<triplet>" in decoded[0] and "<obj>" in decoded[0]  # special tokens survive decoding
    extraction = extractor.extract([Passage("c1", "d1", "", "christopher nolan directed inception .")])
    assert [(t.subject, t.relation, t.object, t.chunk_id, t.extractor) for t in extraction.edges] == [
        ("christopher nolan", "notable work", "inception", "c1", "rebel")
    ]


def test_missing_rebel_weights_give_a_clear_error(tmp_path):
    with pytest.raises(ModelLoadError, match="cannot load REBEL model"):
        load_rebel(str(tmp_path / "no-such-model"))
