"""Object-store paths (`s3://…`, `gs://…`, `file://…`) for the offline build's chunks and graph,
through pyarrow's filesystems.

A cluster build reads its chunks from and writes its graph to a store every worker and the driver
can reach. The partition commit carries over: each partition folder holds one Parquet file, an
object store puts one object whole or not at all, and the nodes file (the commit point) is moved
into place last, so a reader listing partitions by their nodes file never sees half a partition.
"""

from __future__ import annotations

import pyarrow.fs as pafs

from enrich_rag.config import is_uri
from enrich_rag.errors import ConfigError

__all__ = ["exists", "is_uri", "listing", "open_uri"]


def open_uri(uri: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path within it); a scheme pyarrow cannot open is one line naming it."""
    try:
        return pafs.FileSystem.from_uri(uri)
    except (ValueError, OSError) as exc:  # ArrowInvalid is a ValueError
        raise ConfigError(f"cannot open {uri!r} through pyarrow's filesystems: {exc}") from exc


def exists(fs: pafs.FileSystem, path: str) -> bool:
    return fs.get_file_info(path).type != pafs.FileType.NotFound


def listing(fs: pafs.FileSystem, path: str) -> list[pafs.FileInfo]:
    if fs.get_file_info(path).type != pafs.FileType.Directory:
        return []
    return fs.get_file_info(pafs.FileSelector(path))
