"""enrich_rag/bench/graph_recall.py: recall of PageRank's ranking read from a run's traces, by document."""

from enrich_rag.bench import graph_recall


def _row(qid, method, ranks, partitions=()):
    return {"id": qid, "method": method, "partitions": list(partitions), "trace": {"pagerank_top": ranks}}


def test_ranking_recall_counts_documents_once_and_reads_both_rounds():
    gold = {"q1": {"a", "b"}, "q2": {"c", "d"}}
    rows = [
        # Two chunks of one document count once: b is the 2nd document, not the 3rd passage.
        _row("q1", "graph_only", [["a::c0", "a::c1", "b::c0", "x::c0"]]),
        _row("q2", "graph_only", [["x::c0", "c::c0", "y::c0", "z::c0", "w::c0", "d::c0"]]),
        # Enrichment moved d into the top 2 in the second round.
        _row("q2", "enrichrag", [["x::c0", "c::c0", "d::c0"], ["d::c0", "c::c0"]], partitions=["enrich-1"]),
        _row("q1", "naive_rag", []),  # no ranking: not a graph method
    ]
    summary = graph_recall.summarize(rows, gold)
    assert set(summary) == {"graph_only", "enrichrag"}
    only = summary["graph_only"]
    assert only["first_recall@2"] == 0.75 and only["first_all@2"] == 0.5  # q1 both, q2 only c
    assert only["first_recall@5"] == 0.75 and only["first_recall@10"] == 1.0 and only["first_all@10"] == 1.0
    assert only["enriched"] == 0 and only["last_recall@2"] == only["first_recall@2"]
    rich = summary["enrichrag"]
    assert (rich["first_recall@2"], rich["last_recall@2"], rich["last_all@2"], rich["enriched"]) == (0.5, 1.0, 1.0, 1)
