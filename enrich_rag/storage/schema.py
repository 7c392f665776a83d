"""Arrow schemas of everything the build writes: chunks, graph nodes, graph edges."""

from __future__ import annotations

import re

import pyarrow as pa

from enrich_rag.errors import StorageError

CHUNKS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("title", pa.string()),
        ("section", pa.string()),
        ("position", pa.int32()),
        ("text", pa.string()),
    ]
)

NODES = pa.schema(
    [
        ("id", pa.string()),
        ("name", pa.string()),
        ("type", pa.string()),
        ("description", pa.string()),
        ("aliases", pa.list_(pa.string())),
    ]
)

EDGES = pa.schema(
    [
        ("id", pa.string()),
        ("src", pa.string()),
        ("dst", pa.string()),
        # End names are copied onto the edge so a 1-hop query needs no second lookup for names.
        ("src_name", pa.string()),
        ("dst_name", pa.string()),
        ("relation", pa.string()),
        ("evidence", pa.string()),
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("confidence", pa.float32()),
        ("extractor", pa.string()),
    ]
)

SEED_PARTITION = "seed"
_PARTITION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_partition_id(partition: str) -> str:
    """Partition ids become directory names: no separators, no '..', no hidden names."""
    if not isinstance(partition, str) or not _PARTITION_ID.match(partition) or ".." in partition:
        raise StorageError(f"invalid partition id {partition!r} (letters, digits, '.', '_', '-' only)")
    return partition
