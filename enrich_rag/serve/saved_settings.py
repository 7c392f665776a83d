"""The page's saved settings, an overlay on params.yaml kept in the data folder and read again when
another worker process saved it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from enrich_rag.config import Config
from enrich_rag.serve import settings as settings_io


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_size


class SavedSettings:
    def __init__(self, config: Config):
        self.config = config
        self.path = Path(config.paths.root) / settings_io.SETTINGS_FILE
        self._lock = threading.Lock()
        self._overlay, self._stamp = settings_io.load(self.path), _stamp(self.path)

    def overlay(self) -> dict[str, Any]:
        with self._lock:
            if (stamp := _stamp(self.path)) != self._stamp:
                self._overlay, self._stamp = settings_io.load(self.path), stamp
            return self._overlay

    def effective_config(self) -> Config:
        return settings_io.apply(self.config, settings_io.check(settings_io.effective(self.config, self.overlay())))

    def update(self, values: dict[str, Any]) -> None:
        """Any subset of the page's settings, checked by the config's rules, merged into the overlay."""
        checked = settings_io.check(values)
        current = self.overlay()
        self._save({s: current.get(s, {}) | checked.get(s, {}) for s in {*current, *checked}})

    def reset(self) -> None:
        self._save({})

    def view(self) -> dict[str, Any]:
        current = self.overlay()
        return {"settings": settings_io.effective(self.config, current), "overlay": current, "overlay_file": str(self.path)}

    def _save(self, values: dict[str, Any]) -> None:
        with self._lock:
            settings_io.save(self.path, values)
            self._overlay, self._stamp = values, _stamp(self.path)
