"""Atomic file and directory writes: build beside the target, fsync, then rename into place.

A reader (or a crash) sees either the old version or the new one, never a half-written file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            with open(os.path.join(dirpath, name), "rb") as fh:
                os.fsync(fh.fileno())
        _fsync_dir(Path(dirpath))


def staging_path(target: Path, kind: str = "tmp") -> Path:
    """A unique sibling of `target` on the same filesystem; hidden so globs over data skip it.

    `tmp` holds a version being written; `old` holds the replaced version until the swap is done.
    """
    return target.parent / f".{kind}-{target.name}-{uuid.uuid4().hex[:8]}"


def recover(target: Path | str) -> list[str]:
    """Finish or undo an interrupted atomic write of `target` (run under the writer's lock).

    A crash between the two renames of a directory swap leaves no `target` but a complete `.old-`
    copy: it is put back. Every other leftover (`.tmp-` builds, `.old-` copies) is removed.
    """
    target = Path(target)
    actions: list[str] = []
    if not target.parent.is_dir():
        return actions
    olds = sorted(target.parent.glob(f".old-{target.name}-*"), key=lambda p: p.stat().st_mtime)
    if not target.exists() and olds:
        os.replace(olds[-1], target)
        actions.append(f"restored {target.name} from {olds[-1].name}")
    for leftover in list(target.parent.glob(f".tmp-{target.name}-*")) + list(target.parent.glob(f".old-{target.name}-*")):
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
        actions.append(f"removed {leftover.name}")
    return actions


@contextlib.contextmanager
def atomic_file(target: Path | str) -> Iterator[Path]:
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = staging_path(target)
    try:
        yield tmp
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        _fsync_dir(target.parent)
    finally:
        if tmp.exists():
            tmp.unlink()


@contextlib.contextmanager
def atomic_directory(target: Path | str) -> Iterator[Path]:
    """Yield an empty staging directory; on success it replaces `target` whole.

    An existing target is moved aside first and removed only after the new one is in place, so a
    crash leaves either the old or the new directory (plus a hidden leftover that is safe to delete).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = staging_path(target)
    tmp.mkdir()
    try:
        yield tmp
        _fsync_tree(tmp)
        old = None
        if target.exists():
            old = staging_path(target, "old")
            os.replace(target, old)
        os.replace(tmp, target)
        _fsync_dir(target.parent)
        if old is not None:
            shutil.rmtree(old)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def write_parquet_atomic(table: pa.Table, target: Path | str, row_group_size: int | None = None) -> None:
    with atomic_file(target) as tmp:
        pq.write_table(table, tmp, row_group_size=row_group_size, compression="zstd")


def save_index(index, target: Path | str) -> None:
    """Save a search index (anything with `save(path)`, e.g. txtai) into a new folder and swap it in:
    txtai writes in place, and a crash mid-save must not leave a half index."""
    with atomic_directory(target) as tmp:
        index.save(str(tmp))


def write_or_check(path: Path, text: str, check: bool, regenerate: str) -> int:
    """A generated file (results page, configuration reference): write it, or with `check` return 1
    (and say how to regenerate it) when the committed copy differs from what its sources give."""
    if check:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return 0
        print(f"{path.name} differs from its sources: run {regenerate}", file=sys.stderr)
        return 1
    with atomic_file(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0
