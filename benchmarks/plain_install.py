"""A plain `pip install` of a fresh clone, as a user would do without `scripts/run.sh`: the core package,
a folder built, one question; then the extras the first question's error names, and the question again.

What is checked: the core install builds a folder; a question without the reader's extras fails with one
line that names the exact command; after that command, the same question is answered.

    python -m benchmarks plain_install --out bench_results/plain_install.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from benchmarks.newcomer import timed

PROJECT = Path(__file__).resolve().parents[1]
DOCS = {
    "inception.md": "# Inception\n\nInception is a 2010 science fiction film written and directed by Christopher Nolan.\n",
    "nolan.md": "# Christopher Nolan\n\nChristopher Nolan is a British-American filmmaker. He was born in London in 1970.\n",
    "tenet.md": "# Tenet\n\nTenet is a 2020 film written and directed by Christopher Nolan, starring John David Washington.\n",
}
QUESTION = "Who directed Inception?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench_results/plain_install.json")
    args = parser.parse_args()
    console = Console(stderr=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = ":".join(p for p in env["PATH"].split(":") if ".venv" not in p)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True, text=True).stdout.strip()
    steps = []
    with tempfile.TemporaryDirectory() as tmp:
        clone, folder = Path(tmp) / "enrich-rag", Path(tmp) / "my-docs"
        subprocess.run(["git", "clone", "-q", str(PROJECT), str(clone)], check=True)
        folder.mkdir()
        for name, text in DOCS.items():
            (folder / name).write_text(text, encoding="utf-8")
        (clone / "constraints.txt").write_text("torch==2.13.0\n", encoding="utf-8")
        pip = [str(clone / ".venv/bin/pip"), "install", "-q", "--disable-pip-version-check", "-c", "constraints.txt"]
        cli = str(clone / ".venv/bin/enrich-rag")
        plan = [
            ("python -m venv .venv", [sys.executable, "-m", "venv", ".venv"]),
            ("pip install . (core only)", [*pip, "."]),
            ("enrich-rag build my-docs", [cli, "build", str(folder)]),
            ("enrich-rag query (no reader extras)", [cli, "query", QUESTION, "--config", "workspaces/my-docs/config.yaml", "--no-enrich"]),
            ("pip install '.[llamacpp,qwen]' (the command the error names)", [*pip, ".[llamacpp,qwen]"]),
            ("enrich-rag query (again)", [cli, "query", QUESTION, "--config", "workspaces/my-docs/config.yaml", "--no-enrich", "--json"]),
        ]
        for name, command in plan:
            step = timed(command, clone, env)
            record = {"step": name, "returncode": step["returncode"], "seconds": step["seconds"], "peak_rss_mb": step["peak_rss_mb"]}
            if name.startswith("enrich-rag query"):
                record["output_tail"] = step["tail"]
            if name.startswith("enrich-rag query (no"):
                record["error_lines"] = [line for line in step["tail"] if line.startswith("error:")]
            if name.startswith("enrich-rag query (again)") and step["returncode"] == 0:
                record["answer"] = json.loads(step["stdout"])["answer"]
            steps.append(record)
            console.print(record)
    failed = steps[3]
    result = {
        "commit": commit,
        "steps": steps,
        "first_question_fails_with_one_line": failed["returncode"] == 1 and len(failed.get("error_lines", [])) == 1,
        "the_line_names_the_command": any("pip install 'enrich-rag[llamacpp,qwen]'" in line for line in failed.get("error_lines", [])),
        "answered_after_that_command": steps[5]["returncode"] == 0 and bool(steps[5].get("answer")),
    }
    console.print({k: v for k, v in result.items() if k != "steps"})
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
