"""The enrichment queue on a real folder, with real processes: claims, kills and replays."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest

from enrich_rag.storage.enrichment_jobs import DONE, FAILED, PENDING, RUNNING, JobQueue


def test_a_job_is_queued_once_and_runs_once_oldest_first(tmp_path):
    queue = JobQueue(tmp_path / "jobs")
    assert queue.jobs() == [] and queue.requeue_stale() == [] and not queue.root.exists()  # looking writes nothing
    first = queue.put("Where was the director of Inception born?", ["fact"], ["a::c0", "b::c0"])
    assert queue.put("Where was the director of Inception born?", ["other facts"], ["a::c0", "b::c0"]) == first
    second = queue.put("Who directed Inception?", [], ["c::c0"])
    ran: list[str] = []
    finished = queue.run_pending(lambda job: ran.append(job.id) or {"partition": f"p-{job.id}"})
    assert ran == [first.id, second.id] and [j.state for j in finished] == [DONE, DONE]
    assert queue.counts() == {PENDING: 0, RUNNING: 0, DONE: 2, FAILED: 0}
    assert queue.run_pending(lambda job: pytest.fail("nothing is left to run")) == []
    assert queue.jobs(DONE)[0].result == {"partition": f"p-{first.id}"} and queue.jobs(DONE)[0].facts == ("fact",)


def test_a_failing_job_is_kept_with_its_error_and_the_next_one_runs(tmp_path):
    queue = JobQueue(tmp_path / "jobs")
    queue.put("fails", [], ["x::c0"])
    queue.put("works", [], ["y::c0"])

    def run(job):
        if job.question == "fails":
            raise OSError("disk full\nsecond line")
        return {"partition": "p1"}

    failed, done = queue.run_pending(run)
    assert (failed.state, failed.error) == (FAILED, "OSError: disk full") and done.state == DONE
    assert queue.run_pending(run) == []  # a failed job runs once, it is not retried by itself


def _claim_all(root: str, out: multiprocessing.Queue) -> None:
    queue = JobQueue(root)
    out.put([j.question for j in queue.run_pending(lambda job: {"pid": os.getpid()})])


def test_two_worker_processes_never_run_the_same_job(tmp_path):
    queue = JobQueue(tmp_path / "jobs")
    for i in range(40):
        queue.put(f"question {i}", [], [f"c{i}::c0"])
    out: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
    workers = [multiprocessing.get_context("spawn").Process(target=_claim_all, args=(str(queue.root), out)) for _ in range(2)]
    for w in workers:
        w.start()
    ran = [q for _ in workers for q in out.get(timeout=120)]
    for w in workers:
        w.join(timeout=60)
    assert sorted(ran) == sorted(f"question {i}" for i in range(40))  # each once, none twice
    assert queue.counts()[DONE] == 40


CLAIM_AND_HANG = """
import sys, time
from enrich_rag.storage.enrichment_jobs import JobQueue
JobQueue(sys.argv[1]).run_pending(lambda job: (print("claimed", flush=True), time.sleep(600)) and {})
"""


def test_a_job_whose_worker_was_killed_is_replayed_whole(tmp_path):
    """SIGKILL mid-job leaves the job in running/ under a dead process: the next look puts it back in
    pending/, and the next worker runs it (the partition it was writing is the writer's to finish or undo)."""
    queue = JobQueue(tmp_path / "jobs")
    job = queue.put("Where was the director of Inception born?", [], ["a::c0"])
    worker = subprocess.Popen([sys.executable, "-c", CLAIM_AND_HANG, str(queue.root)], stdout=subprocess.PIPE, text=True)
    assert worker.stdout is not None and worker.stdout.readline().strip() == "claimed"
    (running,) = queue.jobs(RUNNING)
    assert running.id == job.id and running.worker == worker.pid
    assert queue.requeue_stale() == []  # its worker is alive: left alone
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    time.sleep(0.1)
    assert queue.requeue_stale() == [job.id] and [j.id for j in queue.jobs(PENDING)] == [job.id]
    (replayed,) = queue.run_pending(lambda j: {"partition": "p1"})
    assert replayed.id == job.id and replayed.state == DONE and queue.jobs(RUNNING) == []
