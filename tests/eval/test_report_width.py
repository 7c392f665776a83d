"""The evaluation's console tables at 80 columns: every method name and figure whole (no `nai…`)."""

from __future__ import annotations

import pytest

from enrich_rag.eval.report import print_pairs, print_table

METHODS = ("no_retrieval", "naive_rag", "oracle", "graph_only", "enrichrag_no_enrich", "enrichrag", "enrichrag_random")


def _stats(i: int) -> dict:
    em = 0.1 + 0.05 * i
    return {
        "n": 300, "em": em, "em_ci": [em - 0.04, em + 0.04], "f1": em + 0.1, "f1_ci": [em + 0.06, em + 0.14],
        "acc": em + 0.02, "acc_ci": [em - 0.02, em + 0.06], "llm_calls": 1.0 + i, "enrich_rounds": 0.0,
        "partitions_written": 0, "latency_p50_s": 0.8 * (i + 1), "latency_p95_s": 1.6 * (i + 1),
    }  # fmt: skip


def _metrics() -> dict:
    """Seven methods with the longest names the evaluation has, and every pair's difference."""
    pairs = [
        {"first": a, "second": b, "n": 300, "em": -0.08, "em_ci": [-0.13, -0.03], "f1": -0.1, "f1_ci": [-0.15, -0.05], "em_mcnemar_p": 0.01}
        for i, a in enumerate(METHODS)
        for b in METHODS[i + 1 :]
    ]
    return {"methods": {m: _stats(i) for i, m in enumerate(METHODS)}, "paired_differences": pairs}


@pytest.mark.parametrize("wide", [False, True])
def test_the_summary_fits_80_columns_unless_asked_wide(monkeypatch, capsys, wide):
    monkeypatch.setenv("COLUMNS", "80")
    metrics = _metrics()
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
