"""The enrichment queue: an unsure answer's EnrichGraph runs after the answer, not before it.

A job is one JSON file in `jobs/` beside the graph it grows, moved between three folders:
  pending/<id>.json          written whole (temp file + rename); the id is the hash of what it asks,
                             so a job that is already waiting or running is not queued twice
  running/<id>@<pid>.json    claimed by one rename: of two workers (processes) only one wins it
  done/<id>.json             its result (or its error), written whole before the running file goes
A worker killed mid-job leaves its running file behind; the next worker to look finds its process gone
and puts the job back in pending/ (replayed whole). The partition the job was writing is finished or
undone whole by the writer's own commit protocol (`GraphWriter.reconcile`), so a replay never meets a
half partition, and a replay of a job whose partition was committed finds its chunks read and writes
nothing new. A job runs at most once to its end: one that fails is kept in done/ with its error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from enrich_rag.storage.atomic import atomic_file

PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"
ENRICH, LEARN = "enrich", "learn"  # an EnrichGraph round; an answer's grounded hops to keep as facts


@dataclass(frozen=True)
class EnrichmentJob:
    """What one EnrichGraph round needs, as the answer that queued it saw it (or, `learn`, the facts an
    answer's grounded hops teach, written in one partition: evidence/learned_facts.py)."""

    id: str
    question: str
    facts: tuple[str, ...] = ()  # the evidence the unsure answer read (the expansion query's context)
    candidates: tuple[str, ...] = ()  # chunk ids to extract first: what it read, then PageRank's top
    queued_at: float = 0.0
    state: str = PENDING
    worker: int | None = None  # the process running it
    result: dict[str, Any] = field(default_factory=dict)  # EnrichResult's fields once done
    error: str = ""
    kind: str = ENRICH
    learned: tuple[dict[str, Any], ...] = ()  # a learn job's facts

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"facts": list(self.facts), "candidates": list(self.candidates), "learned": list(self.learned)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EnrichmentJob:
        return cls(
            data["id"],
            data["question"],
            tuple(data.get("facts", ())),
            tuple(data.get("candidates", ())),
            float(data.get("queued_at", 0.0)),
            data.get("state", PENDING),
            data.get("worker"),
            dict(data.get("result") or {}),
            data.get("error", ""),
            data.get("kind", ENRICH),
            tuple(data.get("learned", ())),
        )


def job_id(question: str, candidates: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps([question, list(candidates)]).encode()).hexdigest()[:16]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class JobQueue:
    """The queue in `root` (a project's `jobs/`); every method is safe beside other processes."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def _folder(self, state: str) -> Path:
        return self.root / (DONE if state == FAILED else state)

    def _dir(self, state: str) -> Path:
        """The state's folder, made when missing (for a write; reading a project never creates it)."""
        path = self._folder(state)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _write(self, path: Path, job: EnrichmentJob) -> None:
        with atomic_file(path) as tmp:
            tmp.write_text(json.dumps(job.to_dict(), ensure_ascii=False), encoding="utf-8")

    def put(self, question: str, facts: Sequence[str] = (), candidates: Sequence[str] = ()) -> EnrichmentJob:
        """Queue a round (or return the same round already waiting or running)."""
        return self._put(
            EnrichmentJob(job_id(question, candidates), question, tuple(facts), candidates=tuple(candidates), queued_at=time.time())
        )

    def put_learned(self, question: str, learned: Sequence[dict[str, Any]]) -> EnrichmentJob:
        """Queue an answer's learned facts (or return the same facts already waiting or running)."""
        id_ = job_id(f"{LEARN}:{question}", [json.dumps(f, sort_keys=True) for f in learned])
        return self._put(EnrichmentJob(id_, question, queued_at=time.time(), kind=LEARN, learned=tuple(learned)))

    def _put(self, job: EnrichmentJob) -> EnrichmentJob:
        for path in (self._folder(PENDING) / f"{job.id}.json", *self._folder(RUNNING).glob(f"{job.id}@*.json")):
            with contextlib.suppress(FileNotFoundError, json.JSONDecodeError):  # looked up by its id, not by reading the queue
                return EnrichmentJob.from_dict(json.loads(path.read_text(encoding="utf-8")))
        self._write(self._dir(PENDING) / f"{job.id}.json", job)
        return job

    def jobs(self, *states: str) -> list[EnrichmentJob]:
        """Jobs in these states (all without any), oldest first; a file another process just moved is skipped."""
        wanted = states or (PENDING, RUNNING, DONE, FAILED)
        found = []
        for folder in dict.fromkeys(DONE if s == FAILED else s for s in wanted):
            for path in self._folder(folder).glob("*.json"):
                with contextlib.suppress(FileNotFoundError, json.JSONDecodeError):
                    job = EnrichmentJob.from_dict(json.loads(path.read_text(encoding="utf-8")))
                    if folder == RUNNING:
                        job = dataclasses.replace(job, state=RUNNING, worker=_owner(path))
                    if job.state in wanted:
                        found.append(job)
        return sorted(found, key=lambda j: j.queued_at)

    def requeue_stale(self) -> list[str]:
        """Jobs whose worker process is gone go back to pending (replayed whole); their ids."""
        requeued = []
        for path in self._folder(RUNNING).glob("*@*.json"):
            if _alive(_owner(path)):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.rename(path, self._dir(PENDING) / f"{path.name.split('@')[0]}.json")
                requeued.append(path.name.split("@")[0])
        return requeued

    def claim(self, kind: str | None = None) -> EnrichmentJob | None:
        """The oldest pending job (of `kind`), moved to running/ under this process (None: nothing is pending)."""
        self.requeue_stale()
        for job in self.jobs(PENDING):
            if kind is not None and job.kind != kind:
                continue
            try:
                os.rename(self._dir(PENDING) / f"{job.id}.json", self._dir(RUNNING) / f"{job.id}@{os.getpid()}.json")
            except FileNotFoundError:  # another worker claimed it first
                continue
            return dataclasses.replace(job, state=RUNNING, worker=os.getpid())
        return None

    def finish(self, job: EnrichmentJob, result: dict[str, Any], error: str = "") -> EnrichmentJob:
        """A claimed job's end (failed when `error`): written to done/ before its running file goes."""
        done = dataclasses.replace(job, state=FAILED if error else DONE, result=result, error=error)
        self._write(self._dir(DONE) / f"{job.id}.json", done)
        (self._dir(RUNNING) / f"{job.id}@{os.getpid()}.json").unlink(missing_ok=True)
        return done

    def run_pending(self, run: Callable[[EnrichmentJob], dict[str, Any]], limit: int = 0, kind: str | None = None) -> list[EnrichmentJob]:
        """Run pending jobs (of `kind`) one at a time until none is left (or `limit` ran): the jobs as they
        ended. A job that raises is kept as failed, with its error, and the next one runs."""
        finished: list[EnrichmentJob] = []
        while (not limit or len(finished) < limit) and (job := self.claim(kind)) is not None:
            try:
                result, error = run(job), ""
            except Exception as exc:  # one job's failure must not stop the worker; it is kept with the job
                result, error = {}, f"{type(exc).__name__}: {exc}".splitlines()[0]
            finished.append(self.finish(job, result, error))
        return finished

    def counts(self) -> dict[str, int]:
        jobs = self.jobs()
        return {state: sum(j.state == state for j in jobs) for state in (PENDING, RUNNING, DONE, FAILED)}


def _owner(path: Path) -> int:
    try:
        return int(path.stem.split("@")[1])
    except (IndexError, ValueError):
        return -1


def jobs_folder(graph: Path | str) -> Path:
    """A project's queue sits beside the graph it grows (a writable copy has its own)."""
    return Path(graph).parent / "jobs"
