"""A build is keyed by the settings that shaped it: a changed overlay rebuilds what it shapes, and only that."""

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from enrich_rag.config import paths_under
from enrich_rag.eval import runner
from enrich_rag.stages.build_keys import read_stamp, staleness
from tests.conftest import PROJECT_ROOT
from tests.test_dvc_pipeline import _dvc


def _overlay(tmp_path, **changes):
    """configs/hotpotqa.yaml on 3 questions, built under tmp_path."""
    data = yaml.safe_load((PROJECT_ROOT / "configs/hotpotqa.yaml").read_text())
    root = tmp_path / "data"
    data["paths"] = paths_under(root)
    data["corpus"]["source"] = str(root / "corpus.jsonl")
    data["eval"].update(sample=3, output=str(tmp_path / "results"))
    data["extraction"].update(changes)
    path = tmp_path / "hotpotqa.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _seed_edges(config):
    return pq.read_table(f"{config.paths.graph}/edges/partition=seed/part-0.parquet").num_rows


@pytest.mark.slow  # builds a 3-question corpus, its indexes and graph, twice
def test_a_changed_seed_share_rebuilds_the_graph_not_the_corpus_index(tmp_path, capsys):
    config, ev = runner.load_eval(PROJECT_ROOT / "params.yaml", _overlay(tmp_path, seed_share=0.5))
    runner.ensure_built(config, ev)
    before = {s: read_stamp(config, s)["key"] for s in ("prepare", "chunks", "corpus_index", "seed_graph", "graph_index")}
    edges_before, run_before = _seed_edges(config), runner.fingerprint(config, ev)
    index_mtime = Path(config.paths.corpus_index).stat().st_mtime_ns
    capsys.readouterr()
    runner.ensure_built(config, ev)  # nothing changed: nothing rebuilt
    assert "building" not in capsys.readouterr().err

    # Questions written over this build (a corpus's own synthetic set) read it as it is: nothing restamped.
    own = yaml.safe_load(_overlay(tmp_path, seed_share=0.5).read_text())
    own["eval"].update(dataset="own", questions=str(PROJECT_ROOT / "testsets/hotpotqa_bundled.jsonl"), corpus="built")
    (tmp_path / "own.yaml").write_text(yaml.safe_dump(own))
    runner.ensure_built(*runner.load_eval(PROJECT_ROOT / "params.yaml", tmp_path / "own.yaml"))
    assert "building" not in capsys.readouterr().err
    assert {s: read_stamp(config, s)["key"] for s in before} == before

    config, ev = runner.load_eval(PROJECT_ROOT / "params.yaml", _overlay(tmp_path, seed_share=1.0))
    assert staleness(config, "seed_graph") == "changed: extraction.seed_share"
    assert staleness(config, "corpus_index") is None
    runner.ensure_built(config, ev)
    err = capsys.readouterr().err
    assert "building build_seed_graph for hotpotqa: changed: extraction.seed_share" in err
    assert "building build_graph_index for hotpotqa: its input (seed_graph) was rebuilt" in err
    assert "build_corpus_index" not in err and "prepare_corpus" not in err
    after = {s: read_stamp(config, s)["key"] for s in before}
    assert [s for s in before if before[s] != after[s]] == ["seed_graph", "graph_index"]
    assert Path(config.paths.corpus_index).stat().st_mtime_ns == index_mtime
    assert _seed_edges(config) > edges_before  # every chunk extracted now, not half
    assert runner.fingerprint(config, ev) != run_before  # a run on the new graph never resumes the old one's answers


@pytest.mark.slow  # `dvc repro` of the evaluation's build stages, twice
def test_dvc_sees_a_changed_overlay_key_and_reruns_only_what_it_shapes(tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    for name in ("dvc.yaml", "params.yaml", "run_evaluation.py", "scripts", "enrich_rag", "configs"):
        src = PROJECT_ROOT / name
        (shutil.copytree(src, repo / name, ignore=shutil.ignore_patterns("__pycache__")) if src.is_dir() else shutil.copy(src, repo / name))
    (repo / "data/benchmarks/hotpotqa_distractor").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "data/benchmarks/hotpotqa_distractor/dev.jsonl", repo / "data/benchmarks/hotpotqa_distractor")
    overlay = repo / "configs/hotpotqa.yaml"
    data = yaml.safe_load(overlay.read_text())
    data["eval"]["sample"] = 3
    overlay.write_text(yaml.safe_dump(data))
    from enrich_rag.storage.dvc_tracking import DvcRepo

    DvcRepo(repo).init()
    first = _dvc(repo, "repro", "eval_graph_index@hotpotqa")
    assert "Running stage 'eval_seed_graph@hotpotqa'" in first
    stamp = json.loads((repo / "data/datasets/hotpotqa/build/seed_graph.json").read_text())
    assert stamp["settings"]["extraction"]["seed_share"] == 0.5

    data["extraction"]["seed_share"] = 0.25
    overlay.write_text(yaml.safe_dump(data))
    status = _dvc(repo, "status", "eval_seed_graph@hotpotqa")
    assert "configs/hotpotqa.yaml:" in status and "modified:           extraction" in status, status
    assert "configs/hotpotqa.yaml" in _dvc(repo, "status", "evaluate@hotpotqa")  # the evaluation tracks the overlay too
    second = _dvc(repo, "repro", "eval_graph_index@hotpotqa")
    assert "Running stage 'eval_seed_graph@hotpotqa'" in second and "Running stage 'eval_graph_index@hotpotqa'" in second
    assert "Running stage 'eval_corpus_index@hotpotqa'" not in second
    stamp = json.loads((repo / "data/datasets/hotpotqa/build/seed_graph.json").read_text())
    assert stamp["settings"]["extraction"]["seed_share"] == 0.25  # the key run_evaluation.py checks agrees with DVC


def test_dvc_run_folders_are_the_ones_run_evaluation_names():
    """`outs` in dvc.yaml name the folder a run writes: the run id is derived from sample, seed and reader."""
    stages = yaml.safe_load((PROJECT_ROOT / "dvc.yaml").read_text())["stages"]
    for key, item in stages["evaluate"]["foreach"].items():
        _, ev = runner.load_eval(PROJECT_ROOT / "params.yaml", PROJECT_ROOT / f"configs/{key}.yaml")
        assert item["run"] == ev.run_id, f"dvc.yaml evaluate@{key} names {item['run']}, the run writes {ev.run_id}"


def test_the_deep_extractors_settings_do_not_key_the_seed_build():
    """They shape EnrichGraph's facts at question time, not the seed: changing them never rebuilds it."""
    from dataclasses import replace

    from enrich_rag.config import load_config
    from enrich_rag.stages.build_keys import stage_settings

    config = load_config(PROJECT_ROOT / "params.yaml")
    deeper = replace(config, extraction=replace(config.extraction, deep="spacy", deep_max_facts=3, batch_size=7))
    assert stage_settings(deeper, "seed_graph") == stage_settings(config, "seed_graph")
    wider = replace(config, extraction=replace(config.extraction, seed_share=0.5))
    assert stage_settings(wider, "seed_graph") != stage_settings(config, "seed_graph")
