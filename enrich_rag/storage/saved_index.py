"""An index a writer loads once, writes under the write lock and saves atomically.

Several processes may write (the server beside a CLI): a writer that finds the index on disk saved by
someone else since it loaded it drops its copy before writing, so no process upserts into (and saves
over) a stale copy. Used for the graph index and the corpus index alike; the writer never imports
txtai, it is handed a way to open the index and uses only `upsert`, `delete`, `search` and `save`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from enrich_rag.storage.atomic import save_index


class SavedIndex:
    def __init__(self, path: Path | str, open_index: Callable[[], Any]):
        self.path = Path(path)
        self._open = open_index
        self._loaded: Any = None
        self._version: tuple | None = None  # the saved index the loaded copy came from
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._loaded is None:
                self._version = self.disk_version()  # before loading: a save in between only costs a reload
                self._loaded = self._open()
            return self._loaded

    @property
    def is_loaded(self) -> bool:
        return self._loaded is not None

    def reload(self) -> None:
        with self._lock:
            self._loaded = None

    def disk_version(self) -> tuple | None:
        """Identity of the saved index: every save swaps in a new folder with new files."""
        try:
            folder = self.path.stat()
            files = sorted((f.name, f.stat().st_mtime_ns) for f in os.scandir(self.path) if f.is_file())
        except FileNotFoundError:
            return None
        return folder.st_ino, folder.st_mtime_ns, tuple(files)

    def sync(self) -> None:
        """Under the write lock: drop a loaded copy that another process has saved over since."""
        with self._lock:
            if self._loaded is not None and self.disk_version() != self._version:
                self._loaded = None

    def save(self) -> None:
        save_index(self.get(), self.path)
        with self._lock:
            self._version = self.disk_version()
