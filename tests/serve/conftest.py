"""A real uvicorn server on a free loopback port, in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(app) -> Iterator[str]:
    """The app served over HTTP until the block ends; yields its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


FOLDERS = {
    "bridges": {"zorblat.md": "# Zorblat Bridge\n\nThe Zorblat Bridge crosses the river Quell. It was built in 1911 by Ada Quince.\n"},
    "towers": {"plimsoll.md": "# Plimsoll Tower\n\nThe Plimsoll Tower stands in the town of Varno. It is 84 metres tall.\n"},
}


def build_two_workspaces(tmp_path: Path) -> dict[str, Path]:
    """Two folders of one page each, built as a user builds them (`enrich-rag build`): name -> overlay."""
    from enrich_rag.stages.folder import build_folder

    overlays = {}
    for name, files in FOLDERS.items():
        folder = tmp_path / "folders" / name
        folder.mkdir(parents=True)
        for file, text in files.items():
            (folder / file).write_text(text, encoding="utf-8")
        overlays[name] = build_folder(folder, tmp_path / "workspaces" / name, PROJECT_ROOT / "params.yaml")
    return overlays
