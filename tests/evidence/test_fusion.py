"""The search's one order (evidence/fusion.py): the hybrid's first passages kept, the walk's order below,
chosen per kind of corpus, told apart from real chunk files."""

from __future__ import annotations

import dataclasses

import pyarrow as pa

from enrich_rag.config import RetrievalConfig
from enrich_rag.evidence.fusion import PAGES, PASSAGES, corpus_kind, dense_weight, followed_first, fused, hybrid_first, linked_pages
from enrich_rag.extract.title_links import TitleGazetteer
from enrich_rag.index.embeddings import search
from enrich_rag.ingest.documents import text_document
from enrich_rag.resources import Resources
from enrich_rag.stages.chunking import chunk_document
from enrich_rag.storage.atomic import write_parquet_atomic
from enrich_rag.storage.passages import CHUNKS, Passage, PassageStore
from tests.conftest import build_small, small_config_at


def _passages(*ids: str) -> list[Passage]:
    return [Passage(i, i, i.upper(), f"text of {i}") for i in ids]


def test_the_hybrids_first_passages_stay_first_and_the_walk_orders_the_rest():
    hits, walked = _passages("h1", "h2", "h3", "h4"), _passages("w1", "h3", "h1", "w2")
    assert [p.id for p in fused(walked, hits, keep=1, k=6)] == ["h1", "w1", "h3", "w2", "h2", "h4"]
    assert [p.id for p in fused(walked, hits, keep=2, k=4)] == ["h1", "h2", "w1", "h3"]
    assert [p.id for p in fused(walked, hits, keep=0, k=3)] == ["w1", "h3", "h1"]  # the walk's order alone
    assert [p.id for p in fused(walked, hits, keep=20, k=5)] == ["h1", "h2", "h3", "h4", "w1"]  # the walk only tops up
    scores = [p.score for p in fused(walked, hits, keep=1, k=6)]
    assert scores[0] == 1.0 and scores == sorted(scores, reverse=True) and len(set(scores)) == 6


def test_the_pages_the_first_passage_names_are_read_right_after_it_the_walks_heaviest_first():
    first = Passage("album::c0", "album", "Angel of Retribution", "... by Judas Priest, with drummer Scott Travis and Rob Halford")
    gazetteer = TitleGazetteer(["Angel of Retribution", "Scott Travis", "Rob Halford", "Judas Priest", "Painkiller"])
    titles = [t for t in gazetteer.named_titles(first.text) if t != first.title]
    assert titles == ["Judas Priest", "Scott Travis", "Rob Halford"]  # in the order the passage names them

    def chunk(doc, title, n=0):
        return Passage(f"{doc}::c{n}", doc, title, f"{title} ...")

    named = [
        chunk("priest", "Judas Priest"),
        chunk("travis", "Scott Travis"),
        chunk("travis", "Scott Travis", 1),
        chunk("halford", "Rob Halford"),
    ]
    mass = {"travis::c1": 0.3, "travis::c0": 0.1, "halford::c0": 0.2}
    assert [p.id for p in linked_pages(named, mass, 2)] == ["travis::c1", "halford::c0"]  # one chunk a page, the heaviest
    assert [p.id for p in linked_pages(named, {}, 2)] == ["priest::c0", "travis::c0"]  # unwalked: the first named
    assert linked_pages([], mass, 2) == []

    hits, walked = _passages("h1", "h2", "h3"), _passages("w1", "f1", "h1")
    followed = _passages("f1")
    assert [p.id for p in fused(walked, hits, keep=1, k=4, followed=followed)] == ["h1", "f1", "w1", "h2"]
    assert [p.id for p in fused(walked, hits, keep=1, k=4)] == ["h1", "w1", "f1", "h2"]
    config = RetrievalConfig(follow_first_pages=0, follow_first_passages=1)
    assert followed_first(config, PAGES) == 0 and followed_first(config, PASSAGES) == 1


def _store(tmp_path, name: str, texts: list[str]) -> PassageStore:
    rows = [p.to_row() for i, text in enumerate(texts) for p in chunk_document(text_document(text, doc_id=f"{name}{i}"), 200)]
    path = tmp_path / f"{name}.parquet"
    write_parquet_atomic(pa.Table.from_pylist(rows, schema=CHUNKS), path)
    return PassageStore(path)


def test_documentation_pages_and_titled_paragraphs_are_told_apart_by_their_section_headings(tmp_path):
    page = (
        "# npm prune\n\nRemove extraneous packages.\n\n## Configuration\n\n### `omit`\n\n"
        "Default: 'dev' if NODE_ENV is production.\n\n## See also\n\nnpm ls."
    )
    docs = _store(tmp_path, "docs", [page, page.replace("prune", "ci")])
    wiki = _store(tmp_path, "wiki", ["Kemble is a village in Gloucestershire.", "# Tenet\n\nTenet is a 2020 film."])
    assert docs.sectioned_share() > 0.5 and corpus_kind(docs.sectioned_share()) == PAGES
    assert wiki.sectioned_share() == 0.0 and corpus_kind(wiki.sectioned_share()) == PASSAGES
    config = RetrievalConfig(hybrid_first_pages=20, hybrid_first_passages=1)
    assert hybrid_first(config, PAGES) == 20 and hybrid_first(config, PASSAGES) == 1


DOC_PAGES = {
    "gc.md": "# dvc gc\n\n## Options\n\n### `--dry`\n\nOnly print the objects `gc` would remove.\n",
    "cache.md": "# Cache\n\n## Cleaning up\n\nDeleting unused files from the cache frees disk space; see which data goes first.\n",
    "remote.md": "# Remotes\n\n## Storage\n\nA remote keeps copies of your data on S3 or a shared drive.\n",
}


def test_documentation_weighs_the_hybrids_bm25_by_its_own_setting(tmp_path, spacy_extractor):
    """A documentation corpus searches with `retrieval.dense_weight_pages`, titled passages with
    `embeddings.dense_weight`: a real txtai index over real markdown pages."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOC_PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    base = small_config_at(tmp_path)
    config = dataclasses.replace(
        base,
        corpus=dataclasses.replace(base.corpus, source=str(folder), format="folder"),
        embeddings=dataclasses.replace(base.embeddings, dense_weight=1.0),
        retrieval=dataclasses.replace(base.retrieval, dense_weight_pages=0.0),
    )
    build_small(config, spacy_extractor)
    question = "Cleaning up the cache: which option only prints the objects?"
    resources = Resources(config, seed_extractor=spacy_extractor)
    try:
        assert resources.corpus_kind == PAGES and dense_weight(config, PAGES) == 0.0 and dense_weight(config, PASSAGES) == 1.0
        order = [p.id for p in resources.retrieval().corpus(question, 3)]
        by_weight = {
            w: [
                h["id"]
                for h in search(resources.corpus_index, question, 3, dataclasses.replace(config.embeddings, dense_weight=w), columns=())
            ]
            for w in (0.0, 1.0)
        }
        assert by_weight[0.0][0] == "gc.md::c0" and by_weight[1.0][0] == "cache.md::c0"  # BM25 and the dense model disagree
        assert order == by_weight[0.0]
    finally:
        resources.close()
