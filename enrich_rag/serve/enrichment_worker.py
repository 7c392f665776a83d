"""The server's enrichment worker: the rounds that answers queued run here, one at a time, while no
question is waiting or running, and a round's reader calls give way to a question that comes while it
runs (`llm/priority.py`): an answer waits for one call of a round at most, not for the round. Every
process of `serve --processes N` has a worker; a job is claimed by one rename, so each runs in one of
them, and the graph's write lock keeps one writer at a time. What a job commits, every process reads
before its next question."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from enrich_rag.api import EnrichRAG
from enrich_rag.llm.priority import in_background

log = logging.getLogger(__name__)


class EnrichmentWorker:
    def __init__(self, rag: EnrichRAG, idle: Callable[[], bool], poll_s: float):
        """`idle`: no question is waiting or running; `poll_s`: how often it looks (0: never runs)."""
        self.rag, self.idle, self.poll_s = rag, idle, poll_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="enrichment", daemon=True)

    def start(self) -> None:
        if self.poll_s > 0:
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            while self.idle() and not self._stop.is_set():
                try:
                    with in_background():  # its reader calls wait while a question waits or runs
                        if not self.rag.enrich_pending(limit=1):
                            break
                except Exception:  # the queue itself failed (a job's own failure is kept with the job)
                    log.exception("enrichment worker: the queue could not be read")
                    break

    def stop(self, wait_s: float = 60.0) -> None:
        """No new round starts; the server's shutdown waits for the one running (a round commits whole:
        closing the project under it would fail its writes and leave the job to run again)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(wait_s)
