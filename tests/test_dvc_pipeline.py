"""The real `dvc repro` pipeline of this project, run in a temp DVC repo on a five-document corpus."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from enrich_rag.storage.dvc_tracking import NO_ANALYTICS, DvcRepo
from tests.conftest import PROJECT_ROOT, SMALL_CORPUS, write_jsonl


def _dvc(repo: Path, *args: str) -> str:
    # as the project calls dvc (no usage report: one process less a call)
    env = {**os.environ, **NO_ANALYTICS, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [str(Path(sys.executable).with_name("dvc")), *args], cwd=repo, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


@pytest.mark.slow  # `dvc repro` of every stage, twice
def test_dvc_repro_builds_skips_and_reruns_on_param_change(tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    for name in ("dvc.yaml", "scripts", "enrich_rag"):
        src = PROJECT_ROOT / name
        (shutil.copytree(src, repo / name, ignore=shutil.ignore_patterns("__pycache__")) if src.is_dir() else shutil.copy(src, repo / name))
    params = yaml.safe_load((PROJECT_ROOT / "params.yaml").read_text())
    params["corpus"].update(source="data/small.jsonl", format="jsonl", chunk_size=400)
    (repo / "params.yaml").write_text(yaml.safe_dump(params))
    (repo / "data").mkdir()
    write_jsonl(repo / "data/small.jsonl", SMALL_CORPUS)
    DvcRepo(repo).init()

    first = _dvc(repo, "repro", "summary")
    for stage in ("prepare_corpus", "build_corpus_index", "build_seed_graph", "build_graph_index", "summary"):
        assert f"Running stage '{stage}'" in first
    assert (repo / "dvc.lock").is_file()
    assert (repo / "data/graph/edges/partition=seed/part-0.parquet").is_file()
    chunks_before = pq.read_table(repo / "data/corpus/chunks.parquet").num_rows

    second = _dvc(repo, "repro", "summary")
    assert "Running stage" not in second

    # Documents added after the build live in the graph's partitions; the indexes are re-recorded as
    # their stages' outputs, so no build stage has anything to do.
    (repo / "tenet.md").write_text("# Tenet\n\nTenet is a 2020 film directed by Christopher Nolan.\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    added = subprocess.run(
        [str(Path(sys.executable).with_name("enrich-rag")), "add", "tenet.md", "--json"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert added.returncode == 0, added.stdout + added.stderr
    assert '"added": [\n    "tenet.md"' in added.stdout or '"tenet.md"' in added.stdout
    # No build stage runs; only the summary, which reports the indexes' sizes and the partitions.
    after_add = _dvc(repo, "repro", "summary")
    assert [line for line in after_add.splitlines() if line.startswith("Running stage")] == ["Running stage 'summary':"]
    assert "up to date" in _dvc(repo, "status", "build_corpus_index", "build_graph_index").lower()

    params["corpus"]["chunk_size"] = 100
    (repo / "params.yaml").write_text(yaml.safe_dump(params))
    third = _dvc(repo, "repro", "summary")
    assert "Running stage 'prepare_corpus'" in third and "Running stage 'build_seed_graph'" in third
    assert pq.read_table(repo / "data/corpus/chunks.parquet").num_rows > chunks_before
