"""The find benchmark's measures (benchmarks/find.py) and the README block drawn from its files."""

from __future__ import annotations

import json

from benchmarks.find import evidence_rank, gold_depth, plain, summarise
from benchmarks.find_report import find_block
from enrich_rag.storage.passages import Passage


def test_a_labelled_line_is_found_however_the_markup_was_rendered():
    line = "The team admin grants package access to teams, `not` [individuals](/orgs)."
    rendered = "Team Admins: The team admin grants package access to teams, not individuals. More."
    assert plain(line) in plain(rendered)
    passages = [Passage("orgs.md::c1", "orgs.md", "Orgs", "Super admins pay."), Passage("orgs.md::c2", "orgs.md", "Orgs", rendered)]
    assert evidence_rank(passages, "orgs.md", line) == 2
    assert evidence_rank(passages, "teams.md", line) is None  # the right words on another page do not count


def test_all_gold_is_found_at_the_rank_of_the_last_gold_paragraph():
    passages = [Passage(f"{d}::c0", d, d, "") for d in ("a", "x", "b", "a")]
    assert gold_depth(passages, ["a", "b"]) == (3, 1)
    assert gold_depth(passages, ["a", "z"]) == (None, 1)


def test_each_search_is_paired_against_the_hybrid_and_the_readme_block_shows_start_and_now(tmp_path):
    rows = [
        {
            "id": "0",
            "default": {"all": 1, "any": 1},
            "hybrid": {"all": 4, "any": 1},
            "dense": {"all": None, "any": None},
            "bm25": {"all": 2, "any": 2},
        },
        {
            "id": "1",
            "default": {"all": 3, "any": 3},
            "hybrid": {"all": 1, "any": 1},
            "dense": {"all": 1, "any": 1},
            "bm25": {"all": 1, "any": 1},
        },
    ]
    summary = summarise(rows, "docs")
    at1, at5 = summary["searches"]["default"]["all@1"], summary["searches"]["default"]["all@5"]
    assert (at1["found"], at1["won"], at1["lost"]) == (1, 1, 1) and at5["found"] == 2 and at5["minus_hybrid"] == 0.0
    assert summary["searches"]["dense"]["all@20"]["lost"] == 1
    (tmp_path / "bench_results").mkdir()
    for label in ("start", "end"):
        (tmp_path / "bench_results" / f"find_{label}.json").write_text(json.dumps({"sets": {"npm": summary}, "rows": {"npm": rows}}))
    block = "\n".join(find_block(tmp_path))
    assert "| npm (2) | the labelled line's passage | default, round start | 1 | 2 | 2 | 2 | 2 |" in block
    assert find_block(tmp_path, frozenset()) == ["No find benchmark is committed yet (`python -m benchmarks find --label end`)."]
