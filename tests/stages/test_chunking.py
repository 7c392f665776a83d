from enrich_rag.ingest.documents import Document, Section
from enrich_rag.stages.chunking import chunk_document, split_sentences


def _doc(*sections: tuple[str, str]) -> Document:
    return Document("d1", "Title", tuple(Section(h, t) for h, t in sections), "test")


def test_split_sentences_keeps_abbreviations_and_initials():
    text = 'Dr. Smith met J. R. R. Tolkien in Oxford. They talked for hours! Did it matter? "Yes," he said.'
    assert split_sentences(text) == [
        "Dr. Smith met J. R. R. Tolkien in Oxford.",
        "They talked for hours!",
        "Did it matter?",
        '"Yes," he said.',
    ]


def test_chunks_end_at_sentence_boundaries_without_overlap():
    sentences = [f"Sentence number {i} says something short." for i in range(20)]
    chunks = chunk_document(_doc(("", " ".join(sentences))), chunk_size=120)
    assert all(len(c.text) <= 120 for c in chunks)
    rebuilt = " ".join(c.text for c in chunks)
    assert rebuilt == " ".join(sentences)  # nothing lost, nothing repeated
    for chunk in chunks:
        assert chunk.text.endswith(".") and chunk.text.startswith("Sentence")


def test_long_sentence_is_cut_at_a_space():
    long = "word " * 100
    chunks = chunk_document(_doc(("", long.strip() + ".")), chunk_size=60)
    assert all(len(c.text) <= 60 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == (long.strip() + ".").split()


def test_chunks_keep_section_and_never_cross_it():
    chunks = chunk_document(_doc(("Early life", "Born in 1970. Grew up in London."), ("Career", "Directed films.")), 500)
    assert [(c.section, c.text) for c in chunks] == [
        ("Early life", "Born in 1970. Grew up in London."),
        ("Career", "Directed films."),
    ]


def test_chunk_ids_are_stable_and_unique():
    doc = _doc(("", "One. Two. Three. Four."))
    first = [c.id for c in chunk_document(doc, 10)]
    assert first == [c.id for c in chunk_document(doc, 10)]
    assert len(set(first)) == len(first) and first[0] == "d1::c0"
