"""Admission control in front of the reader: one bounded FIFO queue, refusals that come at once.

The reader (one llama.cpp model on a few cores) is one resource: questions that run side by side only
share it and all finish late, so they wait in line and run `workers` at a time, in arrival order. Each
question is planned at the bound an answer keeps (`agent.max_answer_s` and `serve.answer_margin_s`): one
whose wait (the running question's bound left, then the line ahead's) and its own bound do not fit its
limit is refused at once with a retry time (when the line is likely free, at typical times), never after
a long wait; one whose client left or whose limit passed while it waited is dropped before it runs. What
is admitted is answered within its limit while the answers ahead keep their bound; should they not (an
enrichment round asked for now), a question that reaches the front with less of its limit left than a
typical question takes is refused then, with a retry time, rather than started and stopped at its limit.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

EWMA = 0.3  # weight of the newest question's time in the running mean
RECENT = 20  # question times kept for the admission estimate
# Admission plans with this quantile of recent question times, not their mean: times vary several-fold
# (with and without enrichment), and a mean admits questions that then wait out their whole limit
# (load test: 3 of 12 and 16 of 24 questions answered 504 after waiting in line).
PLAN_QUANTILE = 0.9


class Busy(Exception):
    """Refused at admission; `retry_after_s` is when the line is likely to have room again."""

    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass
class Ticket:
    job: Callable[[Ticket], Any]
    deadline: float  # monotonic; waiting and running both count
    arrived: float = field(default_factory=time.monotonic)
    expected_wait_s: float = 0.0  # admission's plan when it let the question in
    started: float | None = None
    finished: float | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    future: Future = field(default_factory=Future)

    def timing(self) -> dict[str, float]:
        """Seconds spent waiting in line and running, reported apart."""
        now = time.monotonic()
        start = self.started if self.started is not None else now
        return {
            "waited_s": round(start - self.arrived, 3),
            "ran_s": round((self.finished or now) - start, 3) if self.started is not None else 0.0,
        }


class Admission:
    def __init__(self, workers: int, queue_size: int, initial_question_s: float, bound_s: float = float("inf")):
        """`bound_s`: the longest a question runs (its reader budget and margin): no plan is longer."""
        self.workers, self.queue_size, self.bound_s = workers, queue_size, bound_s
        self.mean_s = initial_question_s  # until a question has been timed here
        self.timed = self.dropped = self.refused = self.refused_late = 0
        self._recent: deque[float] = deque([initial_question_s], maxlen=RECENT)
        self._enrichments: deque[float] = deque(maxlen=RECENT)  # seconds of an enrichment round + its retry
        self._line: deque[Ticket] = deque()
        self._running: list[Ticket] = []
        self._ready = threading.Condition()
        self._threads = [threading.Thread(target=self._serve, name=f"reader-{i}", daemon=True) for i in range(workers)]
        self._closed = False
        for thread in self._threads:
            thread.start()

    def plan_s(self, quantile: float = PLAN_QUANTILE) -> float:
        """The time one question is planned to take (lock held): its bound where answers have one (an
        answer's budget and margin), so a question let in never waits past its limit on questions that
        kept theirs (a cold plan of 10 s let two of 18 questions in to 504 and two more to a refusal after
        50 s: bench_results/time_limit_wave_two_*.json); without one, a high quantile of the recent ones."""
        return self.bound_s if math.isfinite(self.bound_s) else _quantile(self._recent, quantile)

    def typical_s(self) -> float:
        """What a question here most likely takes: the median of the recent ones, at most the bound (lock
        held). When a retry is likely to find room, and how much of its limit a question needs to start."""
        return min(_quantile(self._recent, 0.5), self.bound_s)

    def record_enrichment(self, seconds: float) -> None:
        with self._ready:
            self._enrichments.append(seconds)

    def enrichment_plan_s(self) -> float:
        """The time an enrichment round (and the round that reads it) is planned to take here; 0 until
        one was timed. A question starts one only with this much of its limit left (a fixed reserve
        guessed for one corpus and reader sent a newcomer's question 504 at 60.8 s)."""
        with self._ready:
            return _quantile(self._enrichments, PLAN_QUANTILE) if self._enrichments else 0.0

    def _expected_wait_s(self, plan: float | None = None) -> float:
        """Until a question admitted now would start (lock held): each worker's running question's planned
        time left, then the line ahead shared by the workers, each question planned at `plan` (default:
        `plan_s`)."""
        plan, now = plan if plan is not None else self.plan_s(), time.monotonic()
        left = sorted(max(0.0, plan - (now - (t.started or now))) for t in self._running)
        free_at = left + [0.0] * (self.workers - len(left))  # when each worker is free
        for _ in self._line:  # the line ahead goes to whichever worker frees first
            free_at.sort()
            free_at[0] += plan
        return min(free_at)

    def submit(self, job: Callable[[Ticket], Any], limit_s: float) -> Ticket:
        """Queue `job` (called with its ticket) or raise Busy at once."""
        with self._ready:
            wait, plan = self._expected_wait_s(), self.plan_s()
            # Admission plans with the bound, but the line is likely to have room when the questions
            # ahead take their typical time: a retry then finds the reader free (or a fresh hint),
            # where one timed by the slow plan leaves it idle (load test: 0.82-0.85x the rate of one client).
            likely_free = self._expected_wait_s(self.typical_s())
            if len(self._line) >= self.queue_size:
                self.refused += 1
                raise Busy(f"{len(self._line)} questions are waiting (serve.queue_size)", min(wait, likely_free))
            if wait + plan > limit_s:
                self.refused += 1
                raise Busy(
                    f"expected wait {wait:.0f} s + {plan:.0f} s to answer is over the {limit_s:g} s limit",
                    min(wait + plan - limit_s, likely_free),
                )
            ticket = Ticket(job, time.monotonic() + limit_s, expected_wait_s=wait)
            self._line.append(ticket)
            self._ready.notify()
        return ticket

    def _next(self) -> Ticket | None:
        with self._ready:
            while True:
                while self._line:
                    ticket = self._line.popleft()
                    left = ticket.deadline - time.monotonic()
                    if ticket.cancelled.is_set() or left <= 0:
                        self.dropped += 1  # nobody waits for it any more: it never runs
                        ticket.future.cancel()
                        continue
                    if left < (typical := self.typical_s()):  # it would most likely stop at its limit (a 504)
                        self.refused_late += 1
                        waited = time.monotonic() - ticket.arrived
                        message = f"after {waited:.0f} s in line, {left:.0f} s of the limit is left, under a question's {typical:.0f} s"
                        ticket.future.set_exception(Busy(message, self._expected_wait_s(self.typical_s())))
                        continue
                    ticket.started = time.monotonic()
                    self._running.append(ticket)
                    return ticket
                if self._closed:
                    return None
                self._ready.wait()

    def _serve(self) -> None:
        while (ticket := self._next()) is not None:
            try:
                if ticket.future.set_running_or_notify_cancel():
                    ticket.future.set_result(ticket.job(ticket))
            except BaseException as exc:  # the caller's future carries it; this worker serves the next one
                ticket.future.set_exception(exc)
            finally:
                ticket.finished = time.monotonic()
                with self._ready:
                    self._running.remove(ticket)
                    if not ticket.cancelled.is_set():  # a stopped question's time says nothing about the next one
                        seconds = ticket.finished - (ticket.started or ticket.finished)
                        self.mean_s = (1 - EWMA) * self.mean_s + EWMA * seconds
                        self._recent.append(seconds)
                        self.timed += 1

    def idle(self) -> bool:
        """No question waits or runs: the time the server's enrichment worker takes."""
        with self._ready:
            return not self._line and not self._running

    def health(self) -> dict[str, Any]:
        with self._ready:
            return {
                "queued": len(self._line),
                "running": len(self._running),
                "workers": self.workers,
                "expected_wait_s": round(self._expected_wait_s(), 3),
                "planned_question_s": round(self.plan_s(), 3),
                "planned_enrichment_s": round(_quantile(self._enrichments, PLAN_QUANTILE), 3) if self._enrichments else None,
                "queue_size": self.queue_size,
                "mean_question_s": round(self.mean_s, 3),
                "questions_timed": self.timed,
                "dropped_before_running": self.dropped,
                "refused": self.refused,
                "refused_after_waiting": self.refused_late,
            }

    def close(self) -> None:
        with self._ready:
            self._closed = True
            for ticket in self._line:
                ticket.cancelled.set()
            self._ready.notify_all()


def _quantile(times: deque[float], quantile: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(quantile * len(ordered)))]
