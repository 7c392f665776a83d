"""Two folders in one server beside two servers: does a question to each workspace cite only its own
folder, and what memory does one server with two workspaces hold beside two servers with one each.

Both layouts serve the same two built workspaces (`enrich-rag build` each first) with `enrich-rag serve`
(the two servers up at once), warm, and answer one question per workspace (the first of each folder's questions.jsonl). Memory per
server process after its answers: RSS, and PSS/USS (the reader's weights are a mapped file: RSS counts
the pages two processes share in both, PSS splits them, USS is what a process holds alone).

    python -m benchmarks.first_hour_workspaces --workspace click=workspaces/click-docs \\
        --workspace npm=workspaces/npm-docs --out bench_results/first_hour_workspaces.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import yaml

from enrich_rag.storage.atomic import atomic_file

ROOT = Path(__file__).resolve().parents[1]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _server(specs: list[str], log: Path):
    """`enrich-rag serve` with these workspaces, until the block ends: (its process, its URL)."""
    port = _port()
    command = shutil.which("enrich-rag") or str(Path(sys.executable).with_name("enrich-rag"))
    args = [command, "serve", "--params", str(ROOT / "params.yaml"), "--port", str(port)]
    args += [a for spec in specs for a in ("--workspace", spec)]
    with log.open("w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=os.environ | {"HF_HUB_OFFLINE": "1"})
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 600
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {log.read_text()[-1000:]}")
                try:
                    if httpx.get(f"{url}/api/workspaces", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            yield process, url
        finally:
            process.terminate()
            process.wait(timeout=60)


def _memory(pid: int) -> dict[str, float]:
    info = psutil.Process(pid).memory_full_info()
    return {k: round(getattr(info, k) / 2**20, 1) for k in ("rss", "pss", "uss")}


def _folder_of(workspace: Path) -> tuple[Path, set[str]]:
    """The documents folder a workspace was built from, and the names of its files."""
    source = Path(yaml.safe_load((workspace / "config.yaml").read_text(encoding="utf-8"))["corpus"]["source"])
    return source, {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()}


def _ask(url: str, name: str, workspace: Path) -> dict[str, Any]:
    source, files = _folder_of(workspace)
    question = json.loads((source.parent / "questions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    answer = httpx.post(f"{url}/w/{name}/api/query", json={"question": question["question"]}, timeout=600).json()
    cited = sorted({c["doc_id"] for c in answer["citations"]})
    return {
        "workspace": name,
        "question": question["question"],
        "answer": answer["answer"],
        "gold": question["answers"],
        "cited": cited,
        "cites_only_its_folder": bool(cited) and set(cited) <= files,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", action="append", required=True, help="NAME=PATH of a built workspace (two)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench_results/first_hour_workspaces.json")
    args = parser.parse_args()
    named = {spec.split("=", 1)[0]: Path(spec.split("=", 1)[1]) for spec in args.workspace}
    logs = args.out.with_suffix("")
    result: dict[str, Any] = {"workspaces": {n: str(p) for n, p in named.items()}}
    with _server(args.workspace, Path(f"{logs}.one_server.log")) as (process, url):
        asked = [_ask(url, n, p) for n, p in named.items()]
        result["one_server"] = {"answers": asked, "memory_mb": _memory(process.pid)}
    with ExitStack() as both:  # both up at once, as a user with two folders runs them
        servers = {n: both.enter_context(_server([s], Path(f"{logs}.{n}.log"))) for n, s in zip(named, args.workspace)}
        for name, (_, url) in servers.items():
            _ask(url, name, named[name])
        memory = [_memory(process.pid) for process, _ in servers.values()]
    result["two_servers"] = {"memory_mb": memory, "sum_mb": {k: round(sum(m[k] for m in memory), 1) for k in ("rss", "pss", "uss")}}
    one = result["one_server"]["memory_mb"]
    result["saved_mb"] = {k: round(result["two_servers"]["sum_mb"][k] - one[k], 1) for k in ("rss", "pss", "uss")}
    for a in asked:
        print(f"{a['workspace']}: {a['answer']!r} (gold {a['gold']}), cited {a['cited']}, only its folder: {a['cites_only_its_folder']}")
    print(f"memory, one server with two workspaces: {one}; two servers: {result['two_servers']['sum_mb']}")
    with atomic_file(args.out) as tmp:
        tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
