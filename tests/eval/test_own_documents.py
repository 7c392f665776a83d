"""benchmarks/own_documents.py: the bundled own-documents folder and how a pass is summarised."""

import json

from benchmarks.own_documents import summary
from tests.conftest import PROJECT_ROOT

FOLDER = PROJECT_ROOT / "data/own_documents/npm-docs"


def test_every_written_answer_is_stated_by_a_page_of_the_folder():
    pages = " ".join(p.read_text(encoding="utf-8").casefold() for p in (FOLDER / "docs").glob("*.md"))
    questions = [json.loads(line) for line in (FOLDER / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(questions) == 20 and len(list((FOLDER / "docs").glob("*.md"))) == 20
    missing = [q["question"] for q in questions if not any(a.casefold() in pages for a in q["answers"])]
    assert missing == []


def test_a_pass_is_summarised_by_sure_and_unsure_and_the_time_of_right_answers():
    rows = [
        {"right": True, "sure": True, "total_s": 6.0, "enriched": False},
        {"right": True, "sure": False, "total_s": 30.0, "enriched": True},
        {"right": False, "sure": False, "total_s": 12.0, "enriched": True},
        {"right": True, "sure": False, "total_s": 10.0, "enriched": False},
    ]
    s = summary(rows, within=15.0)
    assert s["em"][0] == 0.75 and s["unsure_share"] == 0.75 and (s["sure"], s["unsure"]) == (1, 3)
    assert s["em_sure"] == 1.0 and s["em_unsure"] == round(2 / 3, 3) and s["enriched"] == 2
    assert (s["right_p50_s"], s["right_max_s"], s["right_within_share"]) == (10.0, 30.0, round(2 / 3, 3))
