from enrich_rag.extract.assemble import graph_tables
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import COOCCURS, MENTIONS


def _triples(extractor, text, title="", chunk_id="c1"):
    return extractor.extract([Passage(chunk_id, "d1", title, text)]).edges


def test_svo_triple_with_provenance(spacy_extractor):
    triples = _triples(spacy_extractor, "Christopher Nolan directed Inception.", chunk_id="doc7::c0")
    svo = [t for t in triples if t.relation not in (COOCCURS, MENTIONS)]
    assert [(t.subject, t.relation, t.object) for t in svo] == [("Christopher Nolan", "directed", "Inception")]
    assert svo[0].evidence == "Christopher Nolan directed Inception."
    assert svo[0].chunk_id == "doc7::c0" and svo[0].doc_id == "d1" and svo[0].extractor == "spacy"


def test_passive_and_prepositional_relations(spacy_extractor):
    triples = _triples(
        spacy_extractor, "Inception is a 2010 film directed by Christopher Nolan. Nolan was born in London.", title="Inception"
    )
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
    extraction = spacy_extractor.extract(
        [Passage("c1", "d1", "Closer (magazine)", "Closer is a weekly magazine. Closer was published in London.")]
    )
    tables = graph_tables(extraction)
    nodes, edges = tables.nodes, tables.edges
    names = set(nodes.column("name").to_pylist())
    assert "Closer (magazine)" in names and "Closer" not in names
    title_row = [r for r in nodes.to_pylist() if r["name"] == "Closer (magazine)"][0]
    assert "Closer" in title_row["aliases"]
    assert title_row["description"] == "Closer is a weekly magazine."
    assert (node_id("Closer (magazine)"), node_id("London")) in set(zip(edges.column("src").to_pylist(), edges.column("dst").to_pylist()))


def test_names_merge_across_chunks_by_normalised_name(spacy_extractor):
    extraction = spacy_extractor.extract(
        [
            Passage("c1", "d1", "", "The Beatles played in Hamburg."),
            Passage("c2", "d2", "", "Abbey Road is an album by the Beatles, recorded in London."),
        ]
    )
    tables = graph_tables(extraction)
    nodes, edges = tables.nodes, tables.edges
    beatles = [r for r in nodes.to_pylist() if r["id"] == node_id("Beatles")]
    assert len(beatles) == 1
    chunk_ids = {e["chunk_id"] for e in edges.to_pylist() if node_id("Beatles") in (e["src"], e["dst"])}
    assert chunk_ids == {"c1", "c2"}


def test_a_chunks_facts_do_not_depend_on_the_batch_it_is_read_in(spacy_extractor):
    """The seed reads chunks in batches (and on Ray actors in other batches): a chunk's facts and
    mentions must be the same alone or among others, and the same on every read."""
    target = Passage("c1", "d1", "Inception", "Christopher Nolan directed Inception. Leonardo DiCaprio starred in it.")
    others = [
        Passage("c0", "d0", "Tenet", "Tenet is a 2020 film directed by Christopher Nolan."),
        Passage("c2", "d2", "London", "Christopher Nolan was born in London. Inception premiered in London."),
    ]
    alone = spacy_extractor.extract([target])
    batched = spacy_extractor.extract([others[0], target, others[1]])
    assert alone.edges and alone.mentions
    assert [e for e in batched.edges if e.chunk_id == "c1"] == alone.edges
    assert [m for m in batched.mentions if m.chunk_id == "c1"] == alone.mentions


def test_links_tie_entities_to_the_passages_that_mention_them(spacy_extractor):
    """Provenance kept: each mention becomes a link; a title links every passage given, extracted or not."""
    extracted = Passage("c1", "d1", "Inception", "Christopher Nolan directed Inception in London.")
    unread = Passage("c2", "d2", "Memento", "Memento is a 2000 film.")
    tables = graph_tables(spacy_extractor.extract([extracted]), titled=[extracted, unread])
    links = {(r["node"], r["chunk_id"]): r for r in tables.links.to_pylist()}
    assert links[(node_id("Christopher Nolan"), "c1")]["is_title"] is False
    assert links[(node_id("London"), "c1")]["doc_id"] == "d1"
    assert links[(node_id("Inception"), "c1")]["is_title"] is True
    assert links[(node_id("Memento"), "c2")]["is_title"] is True and links[(node_id("Memento"), "c2")]["doc_id"] == "d2"
    assert not [k for k in links if k[1] == "c2" and k[0] != node_id("Memento")]  # c2 was never extracted
    memento = [r for r in tables.nodes.to_pylist() if r["id"] == node_id("Memento")][0]
    assert memento["description"] == "Memento is a 2000 film."
