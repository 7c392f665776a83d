"""A folder of documents built and served as a user would (`enrich-rag build`, then `enrich-rag serve`
on the workspace it wrote), for the benchmarks that ask questions through the warm server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.newcomer import free_port, timed, wait_healthy
from enrich_rag.config import load_config
from enrich_rag.serve.access import TOKEN_FILE

PROJECT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ServedFolder:
    url: str
    token: str  # the (first) workspace's write token: with it a question may enrich
    build: dict[str, Any]  # the (first) build command's seconds and peak memory
    warm_s: float  # from starting the server to its first healthy answer
    pid: int
    workspaces: dict[str, tuple[str, str]] = field(default_factory=dict)  # name: (its routes' prefix, its write token)

    def peak_rss_mb(self) -> int:
        status = Path(f"/proc/{self.pid}/status").read_text().splitlines()
        return int(next(line for line in status if line.startswith("VmHWM")).split()[1]) // 1024


@contextmanager
def served_folder(folder: Path, workspace: Path) -> Iterator[ServedFolder]:
    with served_folders({workspace.name: folder}, workspace.parent) as served:
        yield served


@contextmanager
def served_folders(folders: dict[str, Path], root: Path) -> Iterator[ServedFolder]:
    """Each folder built into `root/NAME`, then one server for them all (one reader, one line): a single
    workspace at /api/..., several each at /w/NAME/api/...."""
    env = dict(os.environ)
    cli = str(Path(sys.executable).with_name("enrich-rag"))
    builds = {}
    for name, folder in folders.items():
        builds[name] = timed([cli, "build", str(folder), "--workspace", str(root / name)], PROJECT, env)
        if builds[name]["returncode"] != 0:
            raise SystemExit(f"build of {folder} failed: {builds[name]['tail']}")
    port = free_port()
    started = time.perf_counter()
    if len(folders) == 1:
        where = ["--config", str(root / next(iter(folders)) / "config.yaml")]
    else:
        where = [a for name in folders for a in ("--workspace", f"{name}={root / name}")]
    server = subprocess.Popen(
        [cli, "serve", *where, "--port", str(port)], cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, server)
        warm_s = round(time.perf_counter() - started, 1)
        workspaces = {}
        for name in folders:
            served_root = load_config(PROJECT / "params.yaml", root / name / "config.yaml").paths.root
            token = (Path(served_root) / TOKEN_FILE).read_text(encoding="utf-8").strip()
            workspaces[name] = ("" if len(folders) == 1 else f"/w/{name}", token)
        first = next(iter(folders))
        yield ServedFolder(url, workspaces[first][1], builds[first], warm_s, server.pid, workspaces)
    finally:
        server.terminate()
        server.wait(timeout=60)
