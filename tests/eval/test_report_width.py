"""The evaluation's console tables at 80 columns: every method name and figure whole (no `nai…`)."""

from __future__ import annotations

import json

import pytest

from enrich_rag.eval.report import print_pairs, print_table
from tests.conftest import PROJECT_ROOT

RUN = PROJECT_ROOT / "results/hotpotqa/dev300-0131a0b/metrics.json"  # seven methods, the longest names


@pytest.mark.parametrize("wide", [False, True])
def test_the_summary_fits_80_columns_unless_asked_wide(monkeypatch, capsys, wide):
    monkeypatch.setenv("COLUMNS", "80")
    metrics = json.loads(RUN.read_text())
    print_table(metrics["methods"], "hotpotqa, 300 questions", wide=wide)
    print_pairs(metrics["paired_differences"], wide=wide)
    lines = capsys.readouterr().out.splitlines()
    if wide:  # every column squeezed in: what the narrow default avoids
        assert any("…" in line for line in lines)
        return
    assert max(len(line) for line in lines) <= 80 and not any("…" in line for line in lines)
    text = "\n".join(lines)
    for method, stats in metrics["methods"].items():
        assert f"│ {method} " in text and f"{stats['em']:.3f}" in text
    assert "-0.080 [-0.13, -0.03]" in text  # a paired difference with its interval, whole
