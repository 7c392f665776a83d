"""A newcomer's first hour, timed: a fresh clone, the README's two commands, then your own folder.

In a temp dir: `git clone` of this repository's HEAD, `scripts/run.sh demo` (install, `dvc repro`,
five bundled questions), `scripts/run.sh fast`, `enrich-rag build FOLDER` on a folder the tests never
use, `enrich-rag serve` on it, and `--questions` asked with `enrich-rag query` (which finds the running
server, so the models load once). Each step's wall time and peak RSS (GNU time's maximum resident set
of the step's largest process), each answer with its citations.

    python -m benchmarks newcomer --folder /usr/lib/node_modules/npm/docs/content \
        --folder /usr/share/doc/nodejs/contributing --out bench_results/newcomer.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from rich.console import Console
from rich.table import Table

PROJECT = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "What does npm ci do when package.json and package-lock.json do not match?",
    "Which npm command removes extraneous packages?",
    "What file does npm shrinkwrap write?",
    "How many approvals does a Node.js pull request need before it can land?",
    "What does npm dedupe do?",
]


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> dict:
    """Wall seconds and peak RSS (MB) of a command, its output's last lines."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as stats:  # outside the tree the command runs in
        result = subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", "-o", stats.name, *command], cwd=cwd, env=env, capture_output=True, text=True
        )
        seconds, kb = Path(stats.name).read_text().split()[-2:]
    return {
        "command": " ".join(command),
        "returncode": result.returncode,
        "seconds": round(float(seconds), 1),
        "peak_rss_mb": round(int(kb) / 1024),
        "tail": (result.stdout + result.stderr).strip().splitlines()[-3:],
        "stdout": result.stdout,
    }


def gather(folders: list[Path], into: Path) -> dict:
    """Copy the .md files of `folders` into one folder (subfolders kept apart by the source's name)."""
    count = 0
    for folder in folders:
        for path in folder.rglob("*.md"):
            target = into / folder.name / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
            count += 1
    words = sum(len(p.read_text(errors="replace").split()) for p in into.rglob("*.md"))
    return {"folders": [str(f) for f in folders], "files": count, "words": words}


def wait_healthy(url: str, server: subprocess.Popen) -> None:
    """Until the server at `url` answers its health check (or its process has died)."""
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/health", timeout=5)
            return
        except OSError:
            if server.poll() is not None:
                raise SystemExit("the server did not start") from None
            time.sleep(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, action="append", required=True, help="markdown folders (repeatable)")
    parser.add_argument("--question", action="append", default=None, help="default: five about the npm and Node.js docs")
    parser.add_argument("--skip-demo", action="store_true", help="only install (scripts/run.sh fast), no demo build")
    parser.add_argument("--fast-only", action="store_true", help="stop after scripts/run.sh fast (install and the fast test layer)")
    parser.add_argument("--out", default="bench_results/newcomer.json")
    args = parser.parse_args()
    console = Console(stderr=True)
    questions = args.question or QUESTIONS
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = ":".join(p for p in env["PATH"].split(":") if ".venv" not in p)
    steps, answers = [], []
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "enrich-rag"
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT, capture_output=True, text=True).stdout.strip()
        subprocess.run(["git", "clone", "-q", str(PROJECT), str(clone)], check=True)
        docs = gather(args.folder, Path(tmp) / "my-docs")
        console.print(f"clone of {commit[:7]}; folder: {docs}")
        for name, command in (
            (None if args.skip_demo else "README: scripts/run.sh demo", ["bash", "scripts/run.sh", "demo"]),
            ("README: scripts/run.sh fast", ["bash", "scripts/run.sh", "fast"]),
            ("enrich-rag build my-docs", [".venv/bin/enrich-rag", "build", str(Path(tmp) / "my-docs")]),
        ):
            if name is None:
                continue
            step = timed(command, clone, env)
            del step["stdout"]
            steps.append({"step": name} | step)
            console.print(steps[-1])
            if args.fast_only and command[-1] == "fast":
                Path(args.out).write_text(json.dumps({"commit": commit, "steps": steps}, indent=2) + "\n", encoding="utf-8")
                return
        overlay = clone / "workspaces/my-docs/config.yaml"
        port = free_port()
        started = time.perf_counter()
        server = subprocess.Popen(
            [".venv/bin/enrich-rag", "serve", "--config", str(overlay), "--port", str(port)],
            cwd=clone,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_healthy(f"http://127.0.0.1:{port}", server)
            steps.append({"step": "enrich-rag serve (until healthy)", "seconds": round(time.perf_counter() - started, 1)})
            for question in questions:
                step = timed([".venv/bin/enrich-rag", "query", question, "--config", str(overlay), "--json"], clone, env)
                try:
                    reply = json.loads(step["stdout"])
                except json.JSONDecodeError:
                    reply = {"answer": None, "error": step["tail"]}
                answers.append(
                    {
                        "question": question,
                        "seconds": step["seconds"],
                        "returncode": step["returncode"],
                        "answer": reply.get("answer"),
                        "sure": reply.get("sure"),
                        "error": reply.get("error"),
                        "citations": [c.get("doc_id") for c in reply.get("citations", [])],
                    }
                )
                console.print(answers[-1])
            rss = (
                int(
                    next(line for line in Path(f"/proc/{server.pid}/status").read_text().splitlines() if line.startswith("VmHWM")).split()[
                        1
                    ]
                )
                // 1024
            )
            steps.append({"step": "server peak RSS after the questions", "peak_rss_mb": rss})
        finally:
            server.terminate()
            server.wait(timeout=60)
    table = Table(title=f"a newcomer's first hour: clone of {commit[:7]}, {docs['files']} markdown files")
    for column in ("step", "seconds", "peak RSS MB", "exit"):
        table.add_column(column)
    for s in steps:
        table.add_row(s["step"], str(s.get("seconds", "")), str(s.get("peak_rss_mb", "")), str(s.get("returncode", "")))
    Console().print(table)
    Path(args.out).write_text(json.dumps({"commit": commit, "folder": docs, "steps": steps, "answers": answers}, indent=2) + "\n")


if __name__ == "__main__":
    main()
