"""Questions first: one reader serves both the questions and the enrichment rounds answers queued, and a
round runs many reader calls (20-30 s of deep extraction). The server's enrichment worker marks its
thread as background; its reader calls then wait while a question waits or runs, so a question that
comes mid-round waits for one call of the round, not for the whole round."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

READER_CALLS = frozenset({"generate", "generate_json", "score"})
_background = threading.local()


@contextmanager
def in_background() -> Iterator[None]:
    """Reader calls made on this thread inside the block give way to questions."""
    _background.active = True
    try:
        yield
    finally:
        _background.active = False


class QuestionsFirst:
    """The reader, every attribute passed through; a background thread's reader calls first wait until
    `idle()` (no question waiting or running), looking every `poll_s`."""

    def __init__(self, llm: Any, idle: Callable[[], bool], poll_s: float = 0.05):
        self.llm, self.idle, self.poll_s = llm, idle, poll_s

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.llm, name)
        if name not in READER_CALLS:
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            while getattr(_background, "active", False) and not self.idle():
                time.sleep(self.poll_s)
            return attr(*args, **kwargs)

        return call
