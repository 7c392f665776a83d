"""A folder's workspace: its own place even when another folder has the same name, and an overlay whose
user settings survive a rebuild (the build sets only the corpus and the paths)."""

from __future__ import annotations

import yaml

from enrich_rag.config import load_config
from enrich_rag.stages.folder import OVERLAY, WORKSPACES, default_workspace, write_overlay
from tests.conftest import PROJECT_ROOT


def test_two_folders_of_one_name_get_two_workspaces(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first, second = tmp_path / "a" / "docs", tmp_path / "b" / "docs"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    assert default_workspace(first) == WORKSPACES / "docs"
    write_overlay(first, (tmp_path / default_workspace(first)).resolve())
    assert default_workspace(first) == WORKSPACES / "docs"  # the same folder again: its own workspace
    other = default_workspace(second)
    assert other != WORKSPACES / "docs" and other.name.startswith("docs-")
    assert default_workspace(second) == other  # stable, so its rebuild finds it


def test_a_rebuild_keeps_the_users_settings_and_resets_the_builds_own(tmp_path):
    folder, workspace = tmp_path / "docs", tmp_path / "ws"
    folder.mkdir()
    overlay = write_overlay(folder, workspace)
    data = yaml.safe_load(overlay.read_text())
    data["agent"] = {"abstain": True}
    data["corpus"]["chunk_size"] = 300
    data["corpus"]["source"] = "somewhere/else"
    data["paths"]["graph"] = "elsewhere"
    overlay.write_text(yaml.safe_dump(data))
    write_overlay(folder, workspace)
    config = load_config(PROJECT_ROOT / "params.yaml", workspace / OVERLAY)
    assert config.agent.abstain and config.corpus.chunk_size == 300  # yours, kept
    assert config.corpus.source == str(folder) and config.paths.graph == str(workspace / "data" / "graph")  # the build's, set again
