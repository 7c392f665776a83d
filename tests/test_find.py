"""The find benchmark's measures (benchmarks/find.py) and the README block drawn from its files."""

from __future__ import annotations

import json

import pytest

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
    for label in ("start", "end", "round_end"):
        board = {"commit": f"at-{label}", "sets": {"npm": summary}, "rows": {"npm": rows}}
        (tmp_path / "bench_results" / f"find_{label}.json").write_text(json.dumps(board))
    block = "\n".join(find_block(tmp_path))
    assert "| npm (2) | the labelled line's passage | default, round start | 1 | 2 | 2 | 2 | 2 |" in block
    # a set measured again supersedes its older figure, stamped with the commit it was measured at
    assert "| npm (2) | the labelled line's passage | default, now (at-round_end) | 1 | 2 | 2 | 2 | 2 |" in block
    assert "at-end)" not in block
    assert find_block(tmp_path, frozenset()) == ["No find benchmark is committed yet (`python -m benchmarks find --label end`)."]


def test_a_lever_is_shown_off_beside_on_paired_on_the_same_questions(tmp_path):
    from benchmarks.find_report import LEVERS
    from benchmarks.scoreboard import summarise as board_summary

    def read(right, tokens):
        return {"right": right, "held_answering": True, "prefill_tokens": tokens, "seconds": 2.0, "reader_calls": 1}

    def board(commit, rights, tokens):
        rows = [{"id": str(i), "default": read(r, tokens), "top3": read(r, tokens)} for i, r in enumerate(rights)]
        return {"commit": commit, "sets": {"npm": board_summary(rows) | {"kind": "docs"}}, "rows": {"npm": rows}}

    lever = LEVERS[0]
    (tmp_path / "bench_results").mkdir()
    (tmp_path / "bench_results" / lever.board_off[0]).write_text(json.dumps(board("aaa", [True, False, False, False], 400)))
    (tmp_path / "bench_results" / lever.board_on[0]).write_text(json.dumps(board("bbb", [True, True, True, False], 300)))
    block = "\n".join(find_block(tmp_path))
    row = block.split("Each lever alone")[1].splitlines()[-1]
    assert row.startswith("| npm (docs) | 4 | 0.250 / 0.750 | +0.500 [") and "| 400, 400 / 300, 300 |" in row
    assert row.endswith("| 4 / 4 | 0 / 0 | aaa / bbb |") and f"off: aaa, on: bbb; `{lever.board_off[0]}`" in block


def test_a_set_is_stamped_with_the_state_of_what_decides_an_answer_and_a_benchmark_edit_leaves_it(tmp_path):
    import subprocess

    from benchmarks.find import package_state

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    files = {"enrich_rag/loop.py": "a = 1\n", "params.yaml": "k: 1\n", "configs/x.yaml": "k: 2\n", "benchmarks/b.py": "b = 1\n"}
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    first = package_state(tmp_path)
    (tmp_path / "benchmarks/b.py").write_text("b = 2\n")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "a benchmark edit")
    assert package_state(tmp_path) == first  # another commit, the same default
    (tmp_path / "enrich_rag/loop.py").write_text("a = 2\n")
    assert package_state(tmp_path) == first + "+changed"
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "a package edit")
    assert package_state(tmp_path) not in (first, first + "+changed")


def test_a_lever_measured_on_the_search_alone_shows_off_beside_on_paired_until_its_scoreboard_runs(tmp_path):
    from benchmarks.find_report import LEVERS

    lever = next(lever for lever in LEVERS if lever.find_off == "find_lever_follow_off.json")

    def arm(commit, ranks):
        rows = [{"id": str(i), **{s: {"all": r, "any": r} for s in ("default", "hybrid", "dense", "bm25")}} for i, r in enumerate(ranks)]
        return {"commit": commit, "sets": {"hotpotqa": summarise(rows, "dev")}, "rows": {"hotpotqa": rows}}

    (tmp_path / "bench_results").mkdir()
    (tmp_path / "bench_results" / lever.find_off).write_text(json.dumps(arm("aaa", [2, 7, 12, None])))
    (tmp_path / "bench_results" / lever.find_on).write_text(json.dumps(arm("bbb", [2, 2, 12, 4])))
    block = "\n".join(find_block(tmp_path))
    row = next(line for line in block.splitlines() if line.startswith("| hotpotqa (dev) | 4 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2].startswith("1 / 2 (+0.25 [") and cells[2].endswith("+1/-0)")  # @3: question 1 moved from 7 to 2
    assert cells[3].startswith("1 / 3 (+0.50 [") and cells[3].endswith("+2/-0)")  # @5: and question 3 found at 4
    assert cells[5].startswith("3 / 4 (+0.25 [")  # @20
    assert "off: aaa, on: bbb" in block


def test_an_arm_of_the_default_alone_is_summarised_and_tabled_with_its_settings_read_as_yaml():
    import pytest

    from benchmarks.scoreboard import settings, table
    from benchmarks.scoreboard import summarise as board_summary

    assert settings(["max_answer_s=3600", "plan_when=always"]) == {"max_answer_s": 3600, "plan_when": "always"}
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        settings(["max_answer_s"])
    read = {"held_answering": True, "prefill_tokens": 300, "seconds": 4.0, "reader_calls": 2}
    rows = [{"id": str(i), "default": read | {"right": i < 2}} for i in range(4)]
    summary = board_summary(rows)
    assert summary["default"]["right"] == 2 and summary["paired"] == {} and "top3" not in summary
    rendered = table({"commit": "abc", "sets": {"musique": summary | {"kind": "dev", "commit": "abc", "package": "p1"}}})
    assert rendered.row_count == 1 and "one package state p1" in str(rendered.title)


def test_a_perfect_searchs_read_has_the_passages_that_answer_first_then_the_searchs_best_others(built_small):
    from benchmarks.scoreboard import perfect_top
    from enrich_rag.api import EnrichRAG

    rag = EnrichRAG(built_small)  # the real corpus index and graph of the small build; no reader is asked
    try:
        question = "Where was the director of Inception born?"
        searched = rag.search(question, 5)
        assert len(searched) == 5
        top = perfect_top(rag, question, [searched[4]])
        assert [p.id for p in top] == [searched[4].id, searched[0].id, searched[1].id]
        assert perfect_top(rag, question, searched[1:5]) == searched[1:5]  # more gold than 3: the gold alone, all of it
    finally:
        rag.close()


def test_the_reader_bound_reads_are_paired_and_tabled_without_a_default():
    from benchmarks.scoreboard import summarise as board_summary
    from benchmarks.scoreboard import table

    def read(right):
        return {"right": right, "held_answering": True, "prefill_tokens": 300, "seconds": 2.0, "reader_calls": 1}

    rows = [{"id": str(i), "top3": read(i < 1), "gold_top3": read(i < 2), "gold": read(i < 4)} for i in range(4)]
    summary = board_summary(rows)
    assert summary["paired"]["gold_top3 - gold"]["em_difference"][0] == -0.5
    assert summary["paired"]["top3 - gold_top3"]["lost"] == 1 and "default - gold" not in summary["paired"]
    assert summary["paired"]["gold_top3 - gold"]["lost_where_held"] == 2  # every answering passage was in hand
    rendered = table({"commit": "abc", "sets": {"hotpotqa": summary | {"kind": "dev", "commit": "abc", "package": "p"}}})
    assert [c.header for c in rendered.columns][7:9] == ["top3 - gold_top3", "gold_top3 - gold"]
    assert list(rendered.columns[3].cells) == ["-"] and list(rendered.columns[6].cells) == ["0.500"]


def test_a_scoreboard_reuses_only_the_reads_made_at_its_own_package_state(tmp_path):
    from benchmarks.scoreboard import reusable

    earlier = {
        "sets": {"hotpotqa": {"package": "aaa"}, "musique": {"package": "bbb"}},
        "rows": {"hotpotqa": [{"id": "q1", "top3": {"right": True}}], "musique": [{"id": "q2", "top3": {"right": False}}]},
    }
    path = tmp_path / "find_scoreboard_before.json"
    path.write_text(json.dumps(earlier))
    assert reusable(path, "aaa") == {"hotpotqa": {"q1": {"id": "q1", "top3": {"right": True}}}}
    assert reusable(path, "aaa+changed") == {}  # uncommitted edits: not the state those reads were made at
    with pytest.raises(SystemExit, match="no find_scoreboard_missing.json"):
        reusable(tmp_path / "find_scoreboard_missing.json", "aaa")


def test_the_defaults_misses_are_split_by_whether_what_it_read_held_the_passages_that_answer():
    from benchmarks.find_report import held_split

    def row(held, right, gold_right, calls=1):
        default = {"held_answering": held, "right": right, "reader_calls": calls}
        return {"default": default, "gold": {"right": gold_right}}

    rows = [row(True, True, True), row(True, False, True), row(False, False, True), row(False, False, False, calls=3)]
    lines = held_split({"rows": {"hotpotqa": rows, "npm": [{"default": row(True, True, True)["default"]}]}})
    assert lines[2:] == ["| hotpotqa | 4 | 2 | 1 / 2 | 2 | 0 / 1 | 1 |"]  # a set without the gold read has no row


def test_seconds_compare_only_where_the_same_prompt_ran_at_the_same_pace():
    from benchmarks.find_report import same_prompt_pace

    def row(i, seconds, ids=("a",), tokens=100, calls=1):
        return {"id": str(i), "default": {"seconds": seconds, "read_chunk_ids": list(ids), "prefill_tokens": tokens, "reader_calls": calls}}

    off = [row(0, 2.0), row(1, 4.0), row(2, 1.0), row(3, 5.0)]
    on = [row(0, 2.6), row(1, 5.2), row(2, 9.0, ids=("b",)), row(3, 9.0, calls=2)]  # 2 and 3 read other prompts
    assert same_prompt_pace(off, on) == " (same prompt: x1.30, 2 q)"
    assert same_prompt_pace(off, [row(2, 9.0, tokens=50)]) == ""


def test_only_answers_the_time_bound_ended_count_as_ended_by_it():
    from benchmarks.find_report import bound_ended

    rows = [
        {"default": {"spent": "17.5 of 25 s spent, 7.5 s left for a read forecast at 7.5 s"}},
        {"default": {"spent": "6 of 6 reader calls made"}},  # the calls' bound, not the seconds'
        {"default": {"spent": None}},
        {"top3": {}},  # an arm that did not read the default
    ]
    assert bound_ended(rows) == 1
