"""benchmarks/graph_recall.py: recall of PageRank's ranking read from a run's traces, by document."""

from benchmarks import graph_recall


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


def test_em_is_split_by_whether_the_read_context_held_every_gold_passage():
    gold = {"q1": {"a", "b"}, "q2": {"c", "d"}, "q3": {"e", "f"}}

    def row(qid, method, em, chunk_ids=None, evidence=()):
        trace = {} if chunk_ids is None else {"chunk_ids": chunk_ids}
        return {"id": qid, "method": method, "em": em, "evidence_ids": list(evidence), "partitions": [], "trace": trace}

    rows = [
        row("q1", "oracle", 1.0),
        row("q2", "oracle", 0.0),
        row("q3", "oracle", 1.0),
        # The agent's context is its citations, chunk by chunk: q1 held both, q2 and q3 missed one.
        row("q1", "enrichrag_no_enrich", 1.0, ["a::c0", "a::c1", "b::c0"]),
        row("q2", "enrichrag_no_enrich", 0.0, ["c::c0", "x::c0"]),
        row("q3", "enrichrag_no_enrich", 1.0, ["e::c0"]),
        # A baseline read only its top_k hits: f is 3rd, so q3 missed it with top_k 2.
        row("q3", "naive_rag", 0.0, evidence=["e", "x", "f"]),
        row("q1", "no_retrieval", 0.0),
    ]
    split = graph_recall.by_context(rows, gold, top_k=2)
    assert set(split) == {"enrichrag_no_enrich", "naive_rag"}
    agent = split["enrichrag_no_enrich"]
    assert (agent["n"], agent["held"], agent["context_all"]) == (3, 1, 0.3333)
    assert (agent["em_held"], agent["oracle_em_held"], agent["em_missed"], agent["oracle_em_missed"]) == (1.0, 1.0, 0.5, 0.5)
    assert agent["minus_oracle_missed"]["n"] == 2 and agent["minus_oracle_missed"]["em"] == 0.0
    assert split["naive_rag"]["held"] == 0 and split["naive_rag"]["em_held"] is None and split["naive_rag"]["minus_oracle_held"] is None
    assert graph_recall.by_context(rows, gold, top_k=3)["naive_rag"]["held"] == 1
