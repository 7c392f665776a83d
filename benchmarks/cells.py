"""How a paired difference shows in a table cell, one way for every board, page and README table."""

from __future__ import annotations

from collections.abc import Sequence


def signed_interval(difference: Sequence[float]) -> str:
    """`[value, low, high]` (a paired difference and its 95% interval) as `+0.110 [+0.05, +0.18]`."""
    value, low, high = difference
    return f"{value:+.3f} [{low:+.2f}, {high:+.2f}]"
