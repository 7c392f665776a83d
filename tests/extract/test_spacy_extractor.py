from enrich_rag.extract.assemble import graph_tables
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import COOCCURS, MENTIONS
from enrich_rag.storage.ids import node_id


def _triples(extractor, text, title="", chunk_id="c1"):
    return extractor.extract([Passage(chunk_id, "d1", title, text)]).edges


def test_svo_triple_with_provenance(spacy_extractor):
    triples = _triples(spacy_extractor, "Christopher Nolan directed Inception.", chunk_id="doc7::c0")
    svo = [t for t in triples if t.relation not in (COOCCURS, MENTIONS)]
    assert [(t.subject, t.relation, t.object) for t in svo] == [("Christopher Nolan", "directed", "Inception")]
    assert svo[0].evidence == "Christopher Nolan directed Inception."
    assert svo[0].chunk_id == "doc7::c0" and svo[0].doc_id == "d1" and svo[0].extractor == "spacy"


def test_passive_and_prepositional_relations(spacy_extractor):
    triples = _triples(spacy_extractor, "Inception is a 2010 film directed by Christopher Nolan. Nolan was born in London.",
                       title="Inception")
    found = {(t.subject, t.relation, t.object) for t in triples}
    assert ("Inception", "directed by", "Christopher Nolan") in found
    # "Nolan" in the second sentence is merged into the full name used in the same chunk.
    assert ("Christopher Nolan", "born in", "London") in found


def test_pronoun_subject_resolves_to_the_passage_title(spacy_extractor):
    triples = _triples(spacy_extractor, "He was born in Paris.", title="Victor Hugo")
    assert ("Victor Hugo", "born in", "Paris") in {(t.subject, t.relation, t.object) for t in triples}


def test_cooccurrence_edges_link_entities_of_one_sentence(spacy_extractor):
    triples = _triples(spacy_extractor, "Microsoft and Apple met in Geneva in 2019.")
    pairs = {frozenset((t.subject, t.object)) for t in triples if t.relation == COOCCURS}
    assert frozenset(("Microsoft", "Apple")) in pairs and frozenset(("Apple", "Geneva")) in pairs


def test_title_in_running_text_is_the_title_node(spacy_extractor):
    extraction = spacy_extractor.extract([Passage("c1", "d1", "Closer (magazine)", "Closer is a weekly magazine. Closer was published in London.")])
    nodes, edges = graph_tables(extraction)
    names = set(nodes.column("name").to_pylist())
    assert "Closer (magazine)" in names and "Closer" not in names
    title_row = [r for r in nodes.to_pylist() if r["name"] == "Closer (magazine)"][0]
    assert "Closer" in title_row["aliases"]
    assert title_row["description"] == "Closer is a weekly magazine."
    assert (node_id("Closer (magazine)"), node_id("London")) in set(zip(edges.column("src").to_pylist(), edges.column("dst").to_pylist()))


def test_names_merge_across_chunks_by_normalised_name(spacy_extractor):
    extraction = spacy_extractor.extract([
        Passage("c1", "d1", "", "The Beatles played in Hamburg."),
        Passage("c2", "d2", "", "Abbey Road is an album by the Beatles, recorded in London."),
    ])
    nodes, edges = graph_tables(extraction)
    beatles = [r for r in nodes.to_pylist() if r["id"] == node_id("Beatles")]
    assert len(beatles) == 1
    chunk_ids = {e["chunk_id"] for e in edges.to_pylist() if node_id("Beatles") in (e["src"], e["dst"])}
    assert chunk_ids == {"c1", "c2"}


def test_extraction_is_a_pure_function_of_the_batch(spacy_extractor):
    chunks = [Passage("c1", "d1", "Inception", "Christopher Nolan directed Inception.")]
    assert spacy_extractor.extract(chunks) == spacy_extractor.extract(chunks)
