"""No module imports a room above it (scripts/check_layers.py, run here so CI enforces it)."""

import importlib.util

from tests.conftest import PROJECT_ROOT


def _checker():
    spec = importlib.util.spec_from_file_location("check_layers", PROJECT_ROOT / "scripts/check_layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_package_has_no_upward_import():
    assert _checker().main() == 0


def test_an_upward_import_is_caught(tmp_path, monkeypatch, capsys):
    checker = _checker()
    package = tmp_path / "enrich_rag"
    (package / "storage").mkdir(parents=True)
    (package / "agent").mkdir()
    (package / "agent" / "loop.py").write_text("from enrich_rag.storage.x import y\n")
    (package / "storage" / "x.py").write_text("def f():\n    from enrich_rag.agent.loop import Agent\n")
    monkeypatch.setattr(checker, "PACKAGE", package)
    assert checker.main() == 1
    assert "UPWARD: storage (rank 2) imports agent (rank 5) at enrich_rag/storage/x.py:2" in capsys.readouterr().err
