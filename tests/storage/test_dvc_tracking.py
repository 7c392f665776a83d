"""A repository made by copying the files of the process's one `dvc init --no-scm` is a real DVC repository:
the same files, and `dvc add` and `dvc status` work in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from enrich_rag.storage import dvc_tracking
from enrich_rag.storage.dvc_tracking import DvcRepo

pytestmark = pytest.mark.integration  # `dvc` processes


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_copied_init_is_what_dvc_init_writes_and_dvc_works_in_it(tmp_path):
    by_dvc = tmp_path / "by_dvc"
    by_dvc.mkdir()
    subprocess.run([str(Path(sys.executable).with_name("dvc")), "init", "--no-scm", "-q"], cwd=by_dvc, check=True)
    copied = DvcRepo(tmp_path / "copied")
    copied.init()
    assert copied.exists() and _files(copied.root) == _files(by_dvc)
    assert not list(copied.root.glob(".dvc.tmp-*"))  # the staging folder was renamed into place

    (copied.root / "data").mkdir()
    (copied.root / "data/part.txt").write_text("a fact\n")
    assert copied.record([copied.root / "data"]) == ["dvc add data"]
    assert copied.is_current([copied.root / "data"])
    (copied.root / "data/part.txt").write_text("another fact\n")
    assert not copied.is_current([copied.root / "data"])


def test_init_leaves_an_existing_repository_as_it_is(tmp_path):
    repo = DvcRepo(tmp_path)
    repo.init()
    (tmp_path / ".dvc/config").write_text("[core]\n    no_scm = True\n    autostage = true\n")
    repo.init()
    assert "autostage" in (tmp_path / ".dvc/config").read_text()


def test_the_process_runs_dvc_init_once(tmp_path, monkeypatch):
    calls = []
    real = DvcRepo.run
    monkeypatch.setattr(DvcRepo, "run", lambda self, *args: calls.append(args) or real(self, *args))
    dvc_tracking._init_once.cache_clear()
    for name in ("a", "b", "c"):
        DvcRepo(tmp_path / name).init()
    assert [args[0] for args in calls] == ["init"] and all(DvcRepo(tmp_path / n).exists() for n in "abc")
