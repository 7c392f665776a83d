"""A folder of documents built and served as a user would (`enrich-rag build`, then `enrich-rag serve`
on the workspace it wrote), for the benchmarks that ask questions through the warm server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.newcomer import free_port, timed, wait_healthy
from enrich_rag.config import load_config
from enrich_rag.serve.access import TOKEN_FILE

PROJECT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ServedFolder:
    url: str
    token: str  # the server's write token: with it a question may enrich
    build: dict[str, Any]  # the build command's seconds and peak memory
    warm_s: float  # from starting the server to its first healthy answer
    pid: int

    def peak_rss_mb(self) -> int:
        status = Path(f"/proc/{self.pid}/status").read_text().splitlines()
        return int(next(line for line in status if line.startswith("VmHWM")).split()[1]) // 1024


@contextmanager
def served_folder(folder: Path, workspace: Path) -> Iterator[ServedFolder]:
    env = dict(os.environ)
    cli = str(Path(sys.executable).with_name("enrich-rag"))
    build = timed([cli, "build", str(folder), "--workspace", str(workspace)], PROJECT, env)
    if build["returncode"] != 0:
        raise SystemExit(f"build failed: {build['tail']}")
    port = free_port()
    started = time.perf_counter()
    server = subprocess.Popen(
        [cli, "serve", "--config", str(workspace / "config.yaml"), "--port", str(port)],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, server)
        warm_s = round(time.perf_counter() - started, 1)
        root = load_config(PROJECT / "params.yaml", workspace / "config.yaml").paths.root
        token = (Path(root) / TOKEN_FILE).read_text(encoding="utf-8").strip()
        yield ServedFolder(url, token, build, warm_s, server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)
