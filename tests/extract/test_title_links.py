"""Title links: a chunk that writes another page's title is linked to that page's node (real spaCy)."""

from enrich_rag.extract.assemble import graph_tables
from enrich_rag.extract.title_links import TitleGazetteer, TitleLinkingExtractor
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.passages import Passage

CYCLIST = Passage(
    "meurer::c0", "meurer", "Willi Meurer", "Willi Meurer was a German cyclist. He competed in the road race at the 1936 Summer Olympics."
)
OLYMPICS = Passage("olympics::c0", "olympics", "1936 Summer Olympics", "The 1936 Summer Olympics were held in Berlin, Germany.")
SINGER = Passage("palmer::c0", "palmer", "Robert Palmer (singer)", "Robert Palmer was an English singer.")
ALBUM = Passage("clues::c0", "clues", "Clues (album)", "Clues is an album by Robert Palmer, released in 1980.")


def _links(tables):
    return {(r["node"], r["chunk_id"]): r for r in tables.links.to_pylist()}


def test_a_title_written_in_the_text_links_the_chunk_to_that_page(spacy_extractor):
    # spaCy splits the title into a date and an event: without title links the cyclist never meets the page.
    every = [CYCLIST, OLYMPICS]
    plain = _links(graph_tables(spacy_extractor.extract([CYCLIST]), titled=every))
    assert (node_id("1936 Summer Olympics"), "meurer::c0") not in plain
    linking = TitleLinkingExtractor(spacy_extractor, TitleGazetteer(p.title for p in every))
    linked = _links(graph_tables(linking.extract([CYCLIST]), titled=every))
    assert linked[(node_id("1936 Summer Olympics"), "meurer::c0")]["is_title"] is False
    assert linked[(node_id("1936 Summer Olympics"), "olympics::c0")]["is_title"] is True
    assert linked[(node_id("Willi Meurer"), "meurer::c0")]["count"] == plain[(node_id("Willi Meurer"), "meurer::c0")]["count"]


def test_a_page_with_an_aside_is_the_page_of_its_bare_name(spacy_extractor):
    """ "Robert Palmer (singer)" is where a mention of "Robert Palmer" leads."""
    every = [SINGER, ALBUM]
    linking = TitleLinkingExtractor(spacy_extractor, TitleGazetteer(p.title for p in every))
    links = _links(graph_tables(linking.extract([ALBUM]), titled=every))
    assert links[(node_id("Robert Palmer"), "palmer::c0")]["is_title"] is True
    assert links[(node_id("Robert Palmer (singer)"), "palmer::c0")]["is_title"] is True
    assert links[(node_id("Robert Palmer"), "clues::c0")]["is_title"] is False


def test_the_gazetteer_takes_the_longest_title_as_written():
    gazetteer = TitleGazetteer(["Summer Olympics", "1936 Summer Olympics", "Pronghorn (animal)", "pronghorn", "The"])
    assert gazetteer.find("At the 1936 Summer Olympics, a Pronghorn ran.") == [(7, "1936 Summer Olympics"), (31, "Pronghorn")]
    assert gazetteer.find("a pronghorn at the summer olympics") == []  # lower case names no page; "The" is no title
