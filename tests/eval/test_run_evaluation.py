"""A 5-question evaluation end to end: real build stages, txtai, DuckDB, the embedded LLM, DVC, judge."""

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import yaml

from enrich_rag.config import paths_under
from enrich_rag.eval import runner
from tests.conftest import PROJECT_ROOT

METHODS = ["no_retrieval", "naive_rag", "enrichrag"]  # the judge scores every answer: kept small for CI time


@pytest.fixture
def overlay(tmp_path):
    rows = PROJECT_ROOT.joinpath("data/benchmarks/hotpotqa_distractor/dev.jsonl").read_text(encoding="utf-8").splitlines()[:5]
    questions = tmp_path / "five.jsonl"
    questions.write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = tmp_path / "data"
    config = {
        "corpus": {"source": str(data / "corpus.jsonl"), "format": "jsonl"},
        "extraction": {"seed_share": 0.5},
        "agent": {"max_enrich_rounds": 1},
        "llm": {"backend": "llamacpp", "model": "gemma-270m"},  # the small model on the default runtime
        "paths": paths_under(data),
        "eval": {
            "dataset": "five",
            "questions": str(questions),
            "format": "normalized",
            "sample": 0,
            "methods": METHODS,
            "output": str(tmp_path / "results"),
            "judge": {"enabled": True, "backend": "same"},
        },
    }
    path = tmp_path / "five.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _rows(run_dir):
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow  # a full dataset build and the real model
def test_five_questions_end_to_end_with_resume_after_interruption(overlay, monkeypatch):
    real = runner.make_method
    calls = {"n": 0}

    def interrupted(name, resources, llm):
        method = real(name, resources, llm)

        def run(question):
            calls["n"] += 1
            if calls["n"] == 5:  # Ctrl-C in the middle of the second question
                raise KeyboardInterrupt
            return method(question)

        return run

    monkeypatch.setattr(runner, "make_method", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.run_evaluation(PROJECT_ROOT / "params.yaml", overlay)
    run_dir = overlay.parent / "results/five/allq-seed0-gemma-270m"  # the reader names the run
    saved = _rows(run_dir)
    assert len(saved) == 4  # one whole question (3 methods) + 1 answer of the next, all kept

    monkeypatch.setattr(runner, "make_method", real)
    assert runner.run_evaluation(PROJECT_ROOT / "params.yaml", overlay) == run_dir
    rows = _rows(run_dir)
    assert len(rows) == 15 and rows[:4] == saved  # resumed: nothing finished was redone
    assert len({(r["id"], r["method"]) for r in rows}) == 15

    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["questions"] == 5 and list(metrics["methods"]) == METHODS
    assert (metrics["llm"], metrics["llm_model"]) == ("llamacpp", "gemma-270m")
    for method, stats in metrics["methods"].items():
        assert stats["n"] == 5 and 0 <= stats["f1"] <= 1 and stats["llm_calls"] >= 1
        assert stats["prefill_tokens"] + stats["cached_tokens"] > 0 and stats["generated_tokens"] >= 1  # counted by llama.cpp
        assert 0 <= stats["judge_aggregate"] <= 1 and stats["latency_p95_s"] >= stats["latency_p50_s"] > 0
        assert ("recall@5" in stats) == (method != "no_retrieval")
    assert metrics["methods"]["naive_rag"]["recall@10"] > 0  # dense retrieval finds gold passages in a 50-passage pool
    assert metrics["methods"]["enrichrag"]["precision@5"] > 0
    # The shallow seed left passages out; the full loop extracted some into new, DVC-tracked partitions.
    enriched = [p for r in rows if r["method"] == "enrichrag" for p in r["partitions"]]
    assert metrics["methods"]["enrichrag"]["partitions_written"] == len(enriched)
    for partition in enriched:
        assert (run_dir / "workspace/graph/nodes" / f"partition={partition}.dvc").is_file()
    # Different settings never mix into this run: its answers are moved aside and the run starts over.
    from enrich_rag.eval.runner import check_fingerprint, fingerprint, load_eval

    config, ev = load_eval(PROJECT_ROOT / "params.yaml", overlay)
    assert fingerprint(config, ev) == (run_dir / "fingerprint.txt").read_text().strip()
    # Threads or time limits change no answer: a run resumes under them; a reader setting does not.
    runtime = dataclasses.replace(config, llm=dataclasses.replace(config.llm, threads=1, timeout_s=5))
    assert fingerprint(runtime, ev) == fingerprint(config, ev)
    assert fingerprint(dataclasses.replace(config, llm=dataclasses.replace(config.llm, max_new_tokens=99)), ev) != fingerprint(config, ev)
    # The corpus's fitted confidence model decides where the loop enriches: a new one is a new run.
    before = fingerprint(config, ev)
    (Path(config.paths.root) / "confidence.json").write_text('{"reader": "another"}', encoding="utf-8")
    assert fingerprint(config, ev) != before
    resolved = yaml.safe_load((run_dir / "config.yaml").read_text())  # every setting the run answered with
    assert resolved["evidence"]["k"] == config.evidence.k and resolved["eval"]["sample"] == ev.sample
    assert resolved["llm"]["backend"] == config.llm.backend and set(resolved) >= {"agent", "paths", "embeddings"}
    check_fingerprint(run_dir, "0" * 12)
    assert not (run_dir / "predictions.jsonl").exists() and len(list(run_dir.glob("predictions.*.jsonl"))) == 1
    table = (run_dir / "table.md").read_text()
    assert all(f"| {m} |" in table for m in METHODS) and "Judge gemma-270m:" in table  # how far to trust it
    for name in ("recall_at_k.json", "metric_per_method.json", "latency.json", "recall_at_k.png", "latency.png"):
        assert (run_dir / "plots" / name).stat().st_size > 0


def test_a_runs_fingerprint_does_not_depend_on_where_the_checkout_lives(tmp_path):
    """A second checkout (a git worktree, a moved folder) of the same build resumes the same run."""
    from enrich_rag.eval.runner import fingerprint, load_eval
    from enrich_rag.stages.build_keys import stamp_path

    prints = []
    for name in ("checkout", "worktree"):
        root = tmp_path / name
        root.mkdir()
        shutil.copy(PROJECT_ROOT / "params.yaml", root / "params.yaml")
        config, ev = load_eval(root / "params.yaml", PROJECT_ROOT / "configs/hotpotqa_pool.yaml")
        assert config.paths.graph.startswith(str(root))
        for stage in ("corpus_index", "graph_index"):  # the same build's stamps in both
            stamp_path(config, stage).parent.mkdir(parents=True, exist_ok=True)
            stamp_path(config, stage).write_text(json.dumps({"key": f"{stage}-built"}), encoding="utf-8")
        prints.append(fingerprint(config, ev))
    assert prints[0] == prints[1]


def test_a_run_can_leave_out_the_questions_a_change_was_chosen_on(tmp_path):
    """`eval.skip`: the run answers the sampled questions past the first N, and is a run of its own."""
    from enrich_rag.eval.runner import fingerprint, load_eval, run_questions

    config, ev = load_eval(PROJECT_ROOT / "params.yaml", PROJECT_ROOT / "configs/musique.yaml")
    every = run_questions(dataclasses.replace(ev, sample=0))
    later = run_questions(dataclasses.replace(ev, sample=0, skip=80), limit=10)
    assert [q.id for q in later] == [q.id for q in every[80:90]]
    assert run_questions(dataclasses.replace(ev, sample=0, skip=len(every))) == []
    skipped = dataclasses.replace(ev, skip=80)
    assert fingerprint(dataclasses.replace(config, eval=skipped), skipped) != fingerprint(config, ev)


def test_every_graph_copy_an_evaluation_grows_is_left_out_of_git():
    """A run's graph copies are hundreds of MB of indexes and DVC cache: one committed by mistake once
    made a whole submission too big to land."""
    import subprocess

    from enrich_rag.eval.methods import AGENT_METHODS

    names = [runner.workspace_name(m) for m in AGENT_METHODS] + [f"{runner.WORKSPACE}.0123456789ab"]
    paths = [f"results/hops/musique/dev100-abc/{name}/graph/nodes/part-0.parquet" for name in names]
    done = subprocess.run(["git", "check-ignore", *paths], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert sorted(done.stdout.split()) == sorted(paths)
