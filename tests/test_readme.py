"""The README's Python example, run as written (the default reader on llama.cpp, deep LLM extraction)
on a folder of the test's own documents."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.conftest import PROJECT_ROOT, SMALL_CORPUS


@pytest.mark.slow  # the real 1.5B reader answers and extracts
def test_the_readme_python_example_runs(tmp_path, monkeypatch):
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    example = re.search(r"From Python:\n\n```python\n(.*?)```", readme, re.S).group(1)
    folder = tmp_path / "path/to/folder"
    folder.mkdir(parents=True)
    for doc in SMALL_CORPUS:
        (folder / f"{doc['id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n")
    shutil.copy(PROJECT_ROOT / "params.yaml", tmp_path / "params.yaml")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    rag, answer = namespace["rag"], namespace["answer"]
    assert "Nolan" in answer.answer and answer.citations
    assert answer.quote is not None and "Nolan" in answer.quote.text  # the line that states it
    assert (tmp_path / "graph.graphml").is_file() and rag.graph.verify() == []
    assert (tmp_path / "workspaces/folder/config.yaml").is_file()
    rag.close()
