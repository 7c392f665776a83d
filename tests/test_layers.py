"""No module imports a room above it (benchmarks/check_layers.py, run here so CI enforces it)."""

import importlib

from benchmarks import check_layers


def _checker():
    return importlib.reload(check_layers)  # a fresh copy: tests patch its module globals


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
    assert "UPWARD: storage (rank 2) imports agent (rank 7) at enrich_rag/storage/x.py:2" in capsys.readouterr().err


def test_an_import_circle_and_a_front_door_import_are_caught(tmp_path, monkeypatch, capsys):
    checker = _checker()
    package = tmp_path / "enrich_rag"
    (package / "stages").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "stages" / "__init__.py").write_text("")
    (package / "stages" / "a.py").write_text("from enrich_rag.stages import b\n")
    (package / "stages" / "b.py").write_text("def f():\n    from enrich_rag.stages.a import g\n")
    monkeypatch.setattr(checker, "PACKAGE", package)
    assert checker.main() == 1
    assert "CIRCLE: enrich_rag.stages.a -> enrich_rag.stages.b -> enrich_rag.stages.a" in capsys.readouterr().err
    (package / "stages" / "b.py").write_text("from enrich_rag import EnrichRAG\n")  # the front door is the top room
    assert checker.main() == 1
    assert "UPWARD: stages (rank 4) imports __init__ (rank 11)" in capsys.readouterr().err


def test_the_core_commands_import_without_any_extra():
    """A plain `pip install enrich-rag` has none of the extras: the CLI, the front door and the warm-server
    client must still import, and a question must get as far as the reader (whose own error names its
    extras). Each extra's top module is blocked in a fresh interpreter."""
    import subprocess
    import sys

    extras = ("starlette", "fastapi", "uvicorn", "mcp", "openai", "xllamacpp", "pypdf", "matplotlib", "ray", "selenium", "httpx")
    code = (
        "import sys\n"
        f"for name in {extras!r}:\n"
        "    sys.modules[name] = None\n"
        "import enrich_rag.cli.main, enrich_rag.api, enrich_rag.serve.client\n"
        "from enrich_rag.serve.client import find_server, read_token\n"
        "assert find_server('/nonexistent') is None and read_token('/nonexistent') is None\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
