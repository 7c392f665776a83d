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


def test_with_step_keeps_the_questions_whose_answer_ran_that_tool(tmp_path, monkeypatch):
    """Where enrichment fired (or a bridge was checked): the paired difference on those questions alone."""
    before = [{"id": f"q{i}", "method": "m", "em": False, "f1": 0.0, "trace": {"tools": ["CheckSufficiency"]}} for i in range(8)]
    after = [
        {
            "id": f"q{i}",
            "method": "m",
            "em": i == 0,
            "f1": float(i == 0),
            "trace": {"tools": ["AnalyzeDecide", "EnrichGraph"] if i < 2 else []},
        }
        for i in range(8)
    ]
    a, b = _predictions(tmp_path / "a", before), _predictions(tmp_path / "b", after)
    out = tmp_path / "compare.json"
    monkeypatch.setattr(sys, "argv", ["compare_runs", str(a), str(b), "--method", "m", "--with-step", "EnrichGraph", "--out", str(out)])
    compare_runs.main()
    result = json.loads(out.read_text())
    assert result["with_step"] == {"step": "EnrichGraph", "questions": 2, "share": 0.25}
    assert result["overall"]["n"] == 2 and result["overall"]["em"] == 0.5


def test_over_a_slice_the_questions_the_runs_do_not_hold_count_as_unchanged(tmp_path, monkeypatch):
    """Runs of only the comparisons of a 20-question slice: 2 of their 5 gained is +0.1 over the slice."""
    before = [{"id": f"q{i}", "method": "m", "em": False, "f1": 0.0} for i in range(5)]
    after = [{"id": f"q{i}", "method": "m", "em": i < 2, "f1": float(i < 2)} for i in range(5)]
    a, b = _predictions(tmp_path / "a", before), _predictions(tmp_path / "b", after)
    out = tmp_path / "compare.json"
    monkeypatch.setattr(sys, "argv", ["compare_runs", str(a), str(b), "--method", "m", "--slice", "20", "--out", str(out)])
    compare_runs.main()
    result = json.loads(out.read_text())
    assert result["overall"]["n"] == 5 and result["overall"]["em"] == 0.4
    assert result["over_slice"]["questions_run"] == 5 and result["over_slice"]["n"] == 20 and result["over_slice"]["em"] == 0.1
