import dataclasses

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from enrich_rag.errors import StorageError
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.ids import node_id
from enrich_rag.storage.partitions import committed_partitions, partition_dir, remove_uncommitted, write_partition
from enrich_rag.storage.schema import EDGES, NODES


def _node(name, type_="PERSON"):
    return {"id": node_id(name), "name": name, "type": type_, "description": f"{name} description", "aliases": []}


def _edge(eid, src, relation, dst, chunk="c1", conf=0.8):
    return {
        "id": eid,
        "src": node_id(src),
        "dst": node_id(dst),
        "src_name": src,
        "dst_name": dst,
        "relation": relation,
        "evidence": f"{src} {relation} {dst}.",
        "chunk_id": chunk,
        "doc_id": "d1",
        "confidence": conf,
        "extractor": "test",
    }


def _write(root, partition, nodes, edges):
    write_partition(root, partition, pa.Table.from_pylist(nodes, schema=NODES), pa.Table.from_pylist(edges, schema=EDGES))


@pytest.fixture
def graph(tmp_path):
    root = tmp_path / "graph"
    names = ["Christopher Nolan", "Inception", "London", "Leonardo DiCaprio", "Paris"]
    _write(
        root,
        "seed",
        [_node(n) for n in names],
        [
            _edge("e1", "Christopher Nolan", "directed", "Inception"),
            _edge("e2", "Christopher Nolan", "born in", "London"),
            _edge("e3", "Inception", "stars", "Leonardo DiCaprio", chunk="c2"),
            _edge("e4", "Paris", "co-occurs with", "London", conf=0.4),
        ],
    )
    return root


def test_hive_partition_layout(graph):
    assert (graph / "nodes/partition=seed/part-0.parquet").is_file()
    assert (graph / "edges/partition=seed/part-0.parquet").is_file()
    assert not [p for p in graph.rglob("*") if p.name.startswith(".tmp-")]
    assert pq.read_schema(graph / "edges/partition=seed/part-0.parquet").names == EDGES.names


def test_neighbors_include_outgoing_and_incoming_edges(graph):
    with GraphStore(graph) as store:
        edges = store.neighbors([node_id("Inception")])
        assert {e["id"] for e in edges} == {"e1", "e3"}  # e1 points in, e3 points out
        assert {e["src_name"] for e in edges} | {e["dst_name"] for e in edges} == {"Christopher Nolan", "Inception", "Leonardo DiCaprio"}
        assert {e["id"] for e in store.neighbors([node_id("London")])} == {"e2", "e4"}
        # An edge between two seeds is returned once.
        assert [e["id"] for e in store.neighbors([node_id("Christopher Nolan"), node_id("Inception")])].count("e1") == 1


def test_neighbors_are_ordered_by_confidence_and_limited(graph):
    with GraphStore(graph) as store:
        edges = store.neighbors([node_id("London")], limit=1)
        assert [e["id"] for e in edges] == ["e2"]


def test_find_nodes_by_normalised_name_and_substring(graph):
    with GraphStore(graph) as store:
        assert store.find_nodes("christopher nolan.")[0]["name"] == "Christopher Nolan"
        assert [n["name"] for n in store.find_nodes("dicaprio")] == ["Leonardo DiCaprio"]
        assert store.find_nodes("nobody at all") == []


def test_hostile_names_are_bound_parameters_not_sql(graph):
    with GraphStore(graph) as store:
        assert store.find_nodes("x'); DROP TABLE nodes; --") == []
        assert store.node("x' OR '1'='1") is None
        assert store.counts()["nodes"] == 5


def test_new_partition_is_seen_by_an_open_store_and_nodes_merge(graph):
    with GraphStore(graph) as store:
        assert store.partitions == ["seed"]
        merged = _node("London", "GPE") | {"aliases": ["London, England"]}
        _write(graph, "enrich-20260101-1", [_node("Thames", "LOC"), merged], [_edge("e9", "Thames", "flows through", "London")])
        assert store.partitions == ["seed"]  # unchanged until the next query
        assert {e["id"] for e in store.neighbors([node_id("London")])} == {"e2", "e4", "e9"}
        assert store.partitions == ["seed", "enrich-20260101-1"]
        london = store.node(node_id("London"))
        assert london["type"] == "PERSON" and "London, England" in london["aliases"]  # seed row wins, aliases merge
        counts = store.counts()
        assert counts["nodes"] == 6 and counts["edges"] == 5
        assert [(p["partition"], p["nodes"], p["edges"]) for p in counts["partitions"]] == [("seed", 5, 4), ("enrich-20260101-1", 2, 1)]


def test_edges_without_committed_nodes_are_invisible_and_cleaned(graph):
    # Simulate a crash between the edges rename and the nodes rename (the commit point).
    _write(graph, "enrich-x", [_node("Thames")], [_edge("e9", "Thames", "flows through", "London")])
    nodes_dir = partition_dir(graph, "nodes", "enrich-x")
    for f in nodes_dir.iterdir():
        f.unlink()
    nodes_dir.rmdir()
    assert committed_partitions(graph) == ["seed"]
    with GraphStore(graph) as store:
        assert "e9" not in {e["id"] for e in store.neighbors([node_id("London")])}
    assert remove_uncommitted(graph) == ["edges/partition=enrich-x", "links/partition=enrich-x"]
    assert not partition_dir(graph, "edges", "enrich-x").exists()
    assert not partition_dir(graph, "links", "enrich-x").exists()


def test_invalid_partition_ids_are_rejected(tmp_path):
    for bad in ("../escape", "a/b", ".hidden", ""):
        with pytest.raises(StorageError, match="invalid partition id"):
            partition_dir(tmp_path, "nodes", bad)


def test_empty_or_corrupt_graph_gives_clear_errors(tmp_path, graph):
    with pytest.raises(StorageError, match="no graph partitions"):
        GraphStore(tmp_path / "empty")
    (graph / "edges/partition=seed/part-0.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(StorageError, match="every graph partition .* is damaged.*graph repair"):
        GraphStore(graph)


def test_a_damaged_partition_is_quarantined_with_one_warning_and_comes_back_when_repaired(graph, caplog):
    _write(graph, "enrich-1", [_node("Tom Hardy")], [_edge("e9", "Tom Hardy", "acted in", "Inception")])
    good = (graph / "edges/partition=enrich-1/part-0.parquet").read_bytes()
    (graph / "edges/partition=enrich-1/part-0.parquet").write_bytes(good[: len(good) // 2])  # truncated
    with GraphStore(graph) as store:
        assert store.partitions == ["seed"] and "enrich-1" in store.damaged
        assert store.node(node_id("Christopher Nolan"))  # the seed still answers
        assert store.node(node_id("Tom Hardy")) is None  # nothing half-read from the damaged partition
        store.counts()  # later queries do not warn again
        warnings = [r for r in caplog.records if "enrich-1" in r.getMessage()]
        assert len(warnings) == 1 and "graph repair" in warnings[0].getMessage()
        (graph / "edges/partition=enrich-1/part-0.parquet").write_bytes(good)
        assert store.node(node_id("Tom Hardy")) and not store.damaged


def test_one_edge_model_round_trips_through_the_parquet_schema():
    from enrich_rag.storage.schema import EDGES, Edge

    edge = Edge(
        "Christopher Nolan",
        "directed",
        "Inception",
        "Nolan directed Inception.",
        "inception::c0",
        "inception",
        confidence=0.8,
        extractor="spacy",
        id="e1",
        src="n1",
        dst="n2",
    )
    row = edge.to_row()
    assert list(row) == EDGES.names
    back = Edge.from_row(row | {"partition": "seed"}, score=0.5)
    assert back == dataclasses.replace(edge, partition="seed", score=0.5)
    assert back.triple == "Christopher Nolan directed Inception"


def _link(name, chunk, count=1, is_title=False):
    return {"node": node_id(name), "chunk_id": chunk, "doc_id": chunk.upper(), "count": count, "is_title": is_title}


def test_links_merge_across_partitions_and_follow_their_partition(tmp_path):
    from enrich_rag.storage.partitions import remove_partition
    from enrich_rag.storage.schema import LINKS

    root = tmp_path / "graph"
    write_partition(
        root,
        "seed",
        pa.Table.from_pylist([_node("Inception"), _node("London")], schema=NODES),
        pa.Table.from_pylist([], schema=EDGES),
        pa.Table.from_pylist(
            [_link("Inception", "c1", is_title=True), _link("Inception", "c2"), _link("London", "c3", is_title=True)], schema=LINKS
        ),
    )
    write_partition(
        root,
        "enrich-1",
        pa.Table.from_pylist([_node("Inception")], schema=NODES),
        pa.Table.from_pylist([], schema=EDGES),
        pa.Table.from_pylist([_link("Inception", "c1", count=3), _link("London", "c2", count=2)], schema=LINKS),
    )
    with GraphStore(root) as store:
        rows = {(r["node"], r["chunk_id"]): r for r in store.links(node_ids=[node_id("Inception")])}
        assert set(rows) == {(node_id("Inception"), "c1"), (node_id("Inception"), "c2")}
        assert rows[(node_id("Inception"), "c1")]["count"] == 3 and rows[(node_id("Inception"), "c1")]["is_title"]
        assert rows[(node_id("Inception"), "c1")]["degree"] == 2
        by_chunk = {r["node"] for r in store.links(chunk_ids=["c2"])}
        assert by_chunk == {node_id("Inception"), node_id("London")}
        assert store.covered_chunks(["c1", "c2", "c3"]) == {"c1", "c2"}
        remove_partition(root, "enrich-1")
        assert {r["node"] for r in store.links(chunk_ids=["c2"])} == {node_id("Inception")}
        assert store.covered_chunks(["c1", "c2", "c3"]) == {"c2"}
    assert not partition_dir(root, "links", "enrich-1").exists()


def test_processes_share_one_seed_file_and_follow_a_rebuilt_seed(graph):
    """The seed is derived once into a DuckDB file every store attaches read-only; a second process
    (here, its own interpreter) reuses it; a rebuilt seed gets a new file, and open stores move to it."""
    import subprocess
    import sys

    first = GraphStore(graph)
    files = list((graph / ".store").glob("seed-*.duckdb"))
    assert len(files) == 1 and first.node(node_id("Christopher Nolan"))["name"] == "Christopher Nolan"
    built = files[0].stat().st_mtime_ns
    script = (
        "import sys; from pathlib import Path; from enrich_rag.storage.graph_store import GraphStore; "
        "s = GraphStore(Path(sys.argv[1])); print(len(s.neighbors([sys.argv[2]])))"
    )
    other = subprocess.run([sys.executable, "-c", script, str(graph), node_id("Christopher Nolan")], capture_output=True, text=True)
    assert other.stdout.strip() == "2", other.stderr  # read while this process holds the file open
    assert files[0].stat().st_mtime_ns == built and list((graph / ".store").glob("seed-*.duckdb")) == files

    _write(graph, "enrich-1", [_node("Tom Hardy"), _node("Inception")], [_edge("e9", "Tom Hardy", "acted in", "Inception")])
    assert first.node(node_id("Inception"))["partitions"] == ["seed", "enrich-1"]  # one row, merged
    assert len(first.neighbors([node_id("Inception")])) == 3

    _write(graph, "seed", [_node("Christopher Nolan"), _node("Inception")], [_edge("e1", "Christopher Nolan", "directed", "Inception")])
    assert len(first.neighbors([node_id("Christopher Nolan")])) == 1  # the new seed, through its new file
    assert [p.name for p in (graph / ".store").glob("seed-*.duckdb")] != [files[0].name]
    assert first.node(node_id("London")) is None and first.node(node_id("Tom Hardy"))
    assert not [p for p in graph.rglob(".tmp-*")]
    first.close()
