"""benchmarks/compare_runs.py: two methods of one run, paired, on the questions another run did not hold."""

import json
import sys

from benchmarks import compare_runs


def _predictions(folder, rows):
    folder.mkdir(parents=True)
    (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_two_methods_of_one_run_leave_out_the_questions_looked_at(tmp_path, monkeypatch):
    # q0-q3 were looked at (the excluded run holds them); on them "after" wins every time, on q4-q9 it wins once.
    rows = []
    for i in range(10):
        rows.append({"id": f"q{i}", "method": "before", "type": "bridge", "em": False, "f1": 0.0})
        rows.append({"id": f"q{i}", "method": "after", "type": "bridge", "em": i < 4 or i == 9, "f1": float(i < 4 or i == 9)})
    run = _predictions(tmp_path / "run", rows)
    seen = _predictions(tmp_path / "seen", [{"id": f"q{i}", "method": "other"} for i in range(4)])
    out = tmp_path / "compare.json"
    argv = ["compare_runs", str(run), str(run), "--method", "before", "--method-b", "after", "--exclude", str(seen), "--out", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    compare_runs.main()
    result = json.loads(out.read_text())
    assert result["excluded"] == {"run": str(seen), "questions": 4}
    assert result["overall"]["n"] == 6 and result["overall"]["em"] == round(1 / 6, 4)
    assert result["overall"]["b_em"][0] == round(1 / 6, 4) and result["overall"]["a_em"][0] == 0.0

    monkeypatch.setattr(sys, "argv", argv[:7] + argv[9:])  # without --exclude: all ten, "after" wins five
    compare_runs.main()
    overall = json.loads(out.read_text())["overall"]
    assert overall["n"] == 10 and overall["em"] == 0.5
