"""The issue's scoreboard reads a search_read file and says which targets it meets (benchmarks/search_read_summary.py)."""

import json

from benchmarks.search_read_summary import set_row


def _summary(right, tokens, p50=9.0):
    return {"em": [right / 10, 0, 1], "right": right, "seconds_p50": p50, "reader_calls_mean": 1.0, "prefill_tokens_mean": tokens}


def test_a_docs_folder_meets_what_it_meets_and_misses_what_it_misses(tmp_path):
    (tmp_path / "bench_results").mkdir()
    data = {
        "commit": "abc",
        "questions": 10,
        "summary": {"default": _summary(7, 300), "landed": _summary(6, 480), "top2": _summary(5, 250), "top3": _summary(8, 380)},
        "paired": {"default - top3": {"em_difference": [-0.1, -0.3, 0.1], "won": 0, "lost": 1}},
        "lost_at": {"default": {"top3": {"plan": 0, "pick": 1}}},
        "quote_vs_sure_default": {"right_with_quote_stating_gold": [6, 7]},
        "rows": [{"id": str(i), "default": {"prefill_tokens": 300}, "landed": {"prefill_tokens": 480}} for i in range(10)],
    }
    (tmp_path / "bench_results" / "search_read_x.json").write_text(json.dumps(data))
    row = set_row(tmp_path, "x", "search_read_x.json", "held-out", True, "landed")
    assert row["plain_right"] == {"top2": 5, "top3": 8} and row["tokens_change"] == -0.375
    assert row["tokens_against_round_start"]["difference"] == [-180.0, -180.0, -180.0]  # paired per question
    assert row["targets"] == {
        "at_least_each_plain_read": False,  # 7 < top3's 8
        "quote_states_gold_on_right": False,  # 6 of 7 is under 90%
        "right_at_least_0.65": True,
        "tokens_minus_30pct": True,
        "p50_at_most_5s": False,
    }
    assert set_row(tmp_path, "y", "search_read_y.json", "dev", False, "")["missing"]
