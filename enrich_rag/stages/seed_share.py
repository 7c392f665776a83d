"""Which chunks the seed graph extracts (`extraction.seed_share`): one stable choice, shared by the
local and the Ray engine and by the tools that need the seed's gaps."""

from __future__ import annotations

import hashlib


def in_seed(chunk_id: str, share: float) -> bool:
    """The same chunk is in or out on every build."""
    return share >= 1 or int(hashlib.sha1(chunk_id.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF < share
