"""Fault injection: SIGKILL a writer at random moments, restart, and check consistency.

A sandbox build (`sandbox.py`: bundled HotpotQA passages, a seed graph from a quarter of the chunks so
enrichment has gaps to fill, its own DVC repo) in a temp dir. Each round starts a worker process
that loads everything, then runs one write; the orchestrator kills it with SIGKILL after a random
delay spread over a measured run of the same write. The writes, `--kills` rounds each:
  - enrich:    one EnrichGraph (partition -> index -> DVC);
  - rollback:  the rollback of the newest enrichment partition (an unkilled enrichment first if none);
  - reconcile: the repair of an enrichment that crashed between its partition write and its index
               upsert (made just before, by a worker that exits at that point);
  - compact:   `graph compact` of the enrichment partitions (unkilled enrichments first, to have two);
  - add:       `enrich-rag add` of one new document (a bundled passage the sandbox lacks);
  - remove:    `enrich-rag remove` of one document of the sandbox (the next one each round);
  - job:       `enrich-rag enrich --pending` of the queue's oldest job (a new one queued each round, so a
               killed job, put back in the queue, is the next round's replay).
Then, as the next start would, it runs `reconcile` (and puts a killed worker's job back in the queue) and checks that:
  - no staging leftovers remain, every committed partition reads back (nodes and edges);
  - the graph index holds exactly the rows of the committed partitions (none missing, none orphan);
  - DVC's records match every committed partition and the index (`dvc status` clean);
  - no job is left running: each is pending (replayed next) or done, whole.
The checks are `GraphWriter.verify`, the same the package offers to anyone. With `--verify-cli`, each
restart first runs `enrich-rag graph verify` (exit 1 when the kill left something to finish) and then
`enrich-rag graph verify --repair`, which must exit 0. `--deep` picks the enrichment's extractor
(params.yaml's `extraction.deep`, the LLM, by default). The JSON is rewritten after every round, each
operation marked `complete` only once it has all its rounds, so a stopped run reports what it did.

    python -m benchmarks fault_injection --kills 50 --operations enrich rollback reconcile \
        --out bench_results/fault_injection.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.sandbox import build_sandbox, bundled_passages, sandbox_params
from enrich_rag.config import load_config
from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.enrichment_jobs import RUNNING

OPERATIONS = ["enrich", "rollback", "reconcile", "compact", "add", "remove", "job"]


def _worker(params: Path) -> None:
    """Loads everything, says READY, then runs the one write named on stdin ("enrich <topic>", "rollback",
    "reconcile", "compact", "add <file>", "remove <doc id>", or "crash <topic>": an enrichment that dies
    between partition write and upsert)."""
    from enrich_rag.api import EnrichRAG
    from enrich_rag.storage.partitions import committed_partitions

    config = load_config(params)
    session = EnrichRAG(config, reconcile=False)  # reconciling is one of the operations under test
    resources = session.resources
    for name in ("graph_index", "corpus_index", "extractor", "seed_extractor"):  # load everything before the clock starts
        getattr(resources, name)
    print("READY", flush=True)
    operation, _, topic = sys.stdin.readline().strip().partition(" ")
    started = time.perf_counter()
    if operation == "crash":
        resources.writer.after_partition_write = lambda partition: os._exit(3)
    done: str | bool | None
    if operation in ("enrich", "crash"):
        done = session.agent().jobs.enrich(topic, []).partition
    elif operation == "compact":
        done = (resources.writer.compact() or {}).get("partition")
    elif operation == "add":
        done = session.add(topic).partition
    elif operation == "remove":
        done = session.remove(topic).partition
    elif operation == "job":
        done = ",".join(j.state for j in session.enrich_pending(limit=1))
    elif operation == "rollback":
        done = resources.writer.rollback([p for p in committed_partitions(Path(config.paths.graph)) if p != "seed"][-1])["partition"]
    else:
        done = resources.writer.reconcile().changed
    print(json.dumps({"seconds": time.perf_counter() - started, "done": done}), flush=True)


def _check(params: Path) -> dict:
    """What the next start does (reconcile), then the package's own consistency check on a fresh index."""
    from enrich_rag.api import EnrichRAG

    session = EnrichRAG(load_config(params), reconcile=False)
    resources = session.resources
    report = resources.writer.reconcile()
    replayed = resources.jobs.requeue_stale()
    resources.writer.reload_index()
    problems = resources.writer.verify()
    if left := resources.jobs.jobs(RUNNING):
        problems.append(f"{len(left)} jobs still running after restart")
    counts = resources.store.counts()
    session.close()
    return {
        "partitions": len(counts["partitions"]),
        "nodes": counts["nodes"],
        "edges": counts["edges"],
        "repaired": report.changed,
        "jobs_put_back": len(replayed),
        "jobs": resources.jobs.counts(),
        "problems": problems,
    }


def _verify_cli(params: Path, env: dict) -> dict:
    """The user's own check after a kill: `graph verify` (before anything reconciles), then `--repair`."""
    cli = str(Path(sys.executable).with_name("enrich-rag"))
    before = subprocess.run([cli, "graph", "verify", "--params", str(params)], env=env, capture_output=True, text=True)
    repair = subprocess.run([cli, "graph", "verify", "--repair", "--params", str(params)], env=env, capture_output=True, text=True)
    return {
        "verify_exit": before.returncode,
        "verify_findings": _findings(before),
        "repair_exit": repair.returncode,
        "repair_said": _findings(repair) or (repair.stdout + repair.stderr).strip().splitlines()[-1:],
    }


def _findings(done: subprocess.CompletedProcess) -> list[str]:
    """What the command said was wrong (the CLI writes its messages to stderr)."""
    return [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.startswith(("inconsistent:", "error:"))]


def _enrichments(params: Path) -> list[str]:
    from enrich_rag.storage.partitions import committed_partitions

    return [p for p in committed_partitions(Path(load_config(params).paths.graph)) if p != "seed"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=50, help="rounds per operation")
    parser.add_argument("--operations", nargs="+", default=["enrich", "rollback", "reconcile"], choices=OPERATIONS)
    parser.add_argument("--passages", type=int, default=240)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--deep", choices=["llm", "spacy"], default=None, help="EnrichGraph's extractor (default: params.yaml's)")
    parser.add_argument("--verify-cli", action="store_true", help="after each kill: `graph verify`, then `graph verify --repair`")
    parser.add_argument("--out", default="bench_results/fault_injection.json")
    parser.add_argument("--worker", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker)
        return
    rng = random.Random(args.seed)
    console = Console(stderr=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        params = sandbox_params(Path(tmp), args.passages, seed_share=0.25, **({"extraction": {"deep": args.deep}} if args.deep else {}))
        topics = iter(build_sandbox(params) * 4)
        additions = iter(bundled_passages(2 * args.kills + 2, skip=args.passages))
        removals = iter(f"p{n}" for n in range(args.passages))

        def run(command: str, kill_after: float | None = None) -> tuple[bool, float]:
            """One worker doing `command`; killed after `kill_after` s unless done. (finished, seconds)"""
            proc = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.fault_injection", "--worker", str(params)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
            assert proc.stdin and proc.stdout
            assert proc.stdout.readline().strip() == "READY"
            proc.stdin.write(f"{command}\n")
            proc.stdin.flush()
            if kill_after is None:
                line = proc.stdout.readline()
                proc.wait()
                return True, json.loads(line)["seconds"] if line else 0.0
            time.sleep(kill_after)
            finished = proc.poll() is not None
            if not finished:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return finished, kill_after

        def prepare(operation: str) -> str:
            """Bring the workspace to where `operation` has work to do; returns the command."""
            if operation == "enrich":
                return f"enrich {next(topics)}"
            if operation == "rollback":
                if not _enrichments(params):
                    run(f"enrich {next(topics)}")
                return "rollback"
            if operation == "compact":
                while len(_enrichments(params)) < 2:
                    run(f"enrich {next(topics)}")
                return "compact"
            if operation == "add":
                doc = next(additions)
                path = Path(tmp) / "additions" / f"{doc['id']}.md"
                path.parent.mkdir(exist_ok=True)
                path.write_text(f"# {doc['title']}\n\n{doc['text']}\n", encoding="utf-8")
                return f"add {path}"
            if operation == "remove":
                return f"remove {next(removals)}"
            if operation == "job":
                from enrich_rag.storage.enrichment_jobs import JobQueue, jobs_folder

                JobQueue(jobs_folder(load_config(params).paths.graph)).put(next(topics))
                return "job"
            run(f"crash {next(topics)}")  # a partition written, not indexed, not recorded
            return "reconcile"

        deep = load_config(params).extraction.deep
        for operation in args.operations:
            baseline = run(prepare(operation))[1]  # one undisturbed run sets the time scale
            rows: list[dict[str, Any]] = []
            for i in range(args.kills):
                command = prepare(operation)
                delay = rng.uniform(0, baseline * 1.1)
                finished, _ = run(command, kill_after=delay)
                check = (_verify_cli(params, env) if args.verify_cli else {}) | _check(params)
                rows.append({"kill": i + 1, "delay_s": round(delay, 3), "finished_before_kill": finished, **check})
                console.print(
                    f"{operation} {i + 1}: delay {delay:.2f}s, {'finished' if finished else 'killed'}, "
                    f"{'consistent' if not check['problems'] else check['problems']}"
                )
                # every round is kept as it ends, so a run stopped early still reports the rounds it did
                results[operation] = _summary(rows, baseline, deep, complete=i + 1 == args.kills, verify_cli=args.verify_cli)
                _write(results, Path(args.out))
    table = Table(title="fault injection: SIGKILL at a random moment, then restart and verify")
    for column in (
        "operation",
        "deep",
        "baseline s",
        "rounds",
        "killed mid-operation",
        "`graph verify` exit 1",
        "`verify --repair` exit 0",
        "consistent after restart",
        "problems",
    ):
        table.add_column(column)
    for operation, r in results.items():
        problems = sorted({p for row in r["rows"] for p in row["problems"]})
        table.add_row(
            operation,
            r["deep"],
            f"{r['baseline_s']:.2f}",
            str(r["kills"]),
            str(r["killed_mid_operation"]),
            str(r.get("verify_found_damage", "-")),
            f"{r['repair_exit_0']}/{r['kills']}" if "repair_exit_0" in r else "-",
            f"{r['consistent']}/{r['kills']}",
            "; ".join(problems) or "-",
        )
    Console().print(table)


def _summary(rows: list[dict[str, Any]], baseline: float, deep: str, complete: bool, verify_cli: bool) -> dict[str, Any]:
    """One operation's counts; `complete` is false while (or when a stop left) fewer rounds than asked."""
    summary = {
        "baseline_s": round(baseline, 3),
        "kills": len(rows),
        "complete": complete,
        "killed_mid_operation": sum(not r["finished_before_kill"] for r in rows),
        "consistent": sum(not r["problems"] for r in rows),
        "rows": rows,
        "deep": deep,
    }
    if verify_cli:
        summary |= {
            "verify_found_damage": sum(r["verify_exit"] == 1 for r in rows),
            "repair_exit_0": sum(r["repair_exit"] == 0 for r in rows),
        }
    return summary


def _write(results: dict[str, dict[str, Any]], out: Path) -> None:
    with atomic_file(out) as tmp:
        tmp.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
