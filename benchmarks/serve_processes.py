"""Memory of `enrich-rag serve` with 1 and with 4 worker processes on one machine, default build and reader.

Each server is started as a user would (`enrich-rag serve --processes N`), left to load its indexes and
models in every worker, then asked one question per worker at once (read-only: no token, so nothing is
written). The memory of the server's whole process tree is read from /proc (psutil): RSS counts a
shared page in every process that maps it; PSS splits it among them, so the PSS sum is what the
machine holds; USS is each process's own. Four copies would be ~4x the one-process PSS.

First, the reader alone in a fresh process per `llm.weights` mode (mapped: one copy of the GGUF in the
page cache; private: read and repacked): load seconds, seconds per answer (a 500-token context, 48
new tokens), and its memory, so the price of sharing is measured beside what it saves.

    python -m benchmarks serve_processes --out bench_results/serve_processes.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psutil
from rich.console import Console
from rich.table import Table

QUESTIONS = [
    "Which magazine was started first, Arthur's Magazine or First for Women?",
    "The Oberoi family is part of a hotel company that has a head office in what city?",
    "Musician and satirist Allie Goertz wrote a song about the Simpsons character Milhouse, who was named after who?",
    "What nationality was James Henry Miller's wife?",
]


def _tree_memory(pid: int) -> dict[str, Any]:
    root = psutil.Process(pid)
    rows = []
    for proc in [root, *root.children(recursive=True)]:
        try:
            info = proc.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        rows.append({"pid": proc.pid, "rss_mb": info.rss / 2**20, "pss_mb": info.pss / 2**20, "uss_mb": info.uss / 2**20})
    return {
        "processes": len(rows),
        "rss_sum_mb": round(sum(r["rss_mb"] for r in rows), 1),
        "pss_sum_mb": round(sum(r["pss_mb"] for r in rows), 1),
        "uss_sum_mb": round(sum(r["uss_mb"] for r in rows), 1),
        "per_process": [{k: round(v, 1) if isinstance(v, float) else v for k, v in r.items()} for r in rows],
    }


def _ask(url: str, question: str) -> dict[str, Any]:
    body = json.dumps({"question": question, "allow_enrich": False}).encode()
    request = urllib.request.Request(f"{url}/api/query", data=body, headers={"Content-Type": "application/json"}, method="POST")
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            answer = json.loads(response.read())
            return {"status": response.status, "answer": answer.get("answer"), "seconds": round(time.perf_counter() - t0, 2)}
    except urllib.error.HTTPError as exc:
        return {"status": exc.code, "seconds": round(time.perf_counter() - t0, 2)}


def _settled(pid: int, workers: int, console: Console, timeout_s: float = 600) -> float:
    """Seconds until every worker has loaded (the tree's memory stops growing for 10 s)."""
    t0, last, still = time.perf_counter(), 0.0, 0.0
    while time.perf_counter() - t0 < timeout_s:
        time.sleep(2)
        memory = _tree_memory(pid)
        busy = memory["processes"] < workers + (1 if workers > 1 else 0)
        if not busy and abs(memory["rss_sum_mb"] - last) < 0.01 * max(last, 1):
            still += 2
            if still >= 10:
                return time.perf_counter() - t0 - still
        else:
            still = 0.0
        last = memory["rss_sum_mb"]
        console.print(f"  loading: {memory['processes']} processes, RSS {memory['rss_sum_mb']:.0f} MB")
    raise RuntimeError("the server did not settle")


PROBE_CONTEXT = " ".join(["The River Thames flows through southern England and then through London to the sea."] * 30)


def probe_reader(params: str, weights: str, answers: int = 5) -> dict[str, Any]:
    """The configured reader with `llm.weights` = weights, in this process (run in a fresh one)."""
    import dataclasses

    from enrich_rag.config import load_config
    from enrich_rag.llm.factory import make_llm

    config = load_config(params)
    t0 = time.perf_counter()
    llm = make_llm(dataclasses.replace(config.llm, weights=weights))
    llm.generate("Hello", max_new_tokens=1)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(answers):  # a new question each time: the context is read again, as for a new question
        llm.generate(f"Question {i}: where does the river flow?\nContext: {PROBE_CONTEXT}\nAnswer:", max_new_tokens=48)
    info = psutil.Process().memory_full_info()
    return {
        "weights": weights,
        "load_s": round(load_s, 2),
        "s_per_answer": round((time.perf_counter() - t0) / answers, 2),
        "rss_mb": round(info.rss / 2**20),
        "uss_mb": round(info.uss / 2**20),
        "file_backed_mb": round(info.shared / 2**20),
    }


def measure(processes: int, port: int, params: str, console: Console) -> dict[str, Any]:
    cli = str(Path(sys.executable).with_name("enrich-rag"))
    server = subprocess.Popen(
        [cli, "serve", "--params", params, "--port", str(port), "--processes", str(processes)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        load_s = _settled(server.pid, processes, console)
        loaded = _tree_memory(server.pid)
        url = f"http://127.0.0.1:{port}"
        with ThreadPoolExecutor(len(QUESTIONS)) as pool:
            answers = list(pool.map(lambda q: _ask(url, q), QUESTIONS))
        time.sleep(2)
        after = _tree_memory(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)
    return {"processes": processes, "load_s": round(load_s, 1), "loaded": loaded, "after_questions": after, "answers": answers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=8731)
    parser.add_argument("--out", default="bench_results/serve_processes.json")
    parser.add_argument("--probe-reader", choices=("mapped", "private"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_reader:
        print(json.dumps(probe_reader(args.params, args.probe_reader)))
        return
    console = Console(stderr=True)
    readers = []
    for weights in ("private", "mapped"):
        probe = [sys.executable, "-m", "benchmarks.serve_processes", "--params", args.params, "--probe-reader", weights]
        readers.append(json.loads(subprocess.run(probe, check=True, capture_output=True, text=True).stdout.splitlines()[-1]))
        console.print(readers[-1])
    runs = [measure(n, args.port + i, args.params, console) for i, n in enumerate((1, args.workers))]
    one, many = runs
    result = {
        "reader_alone": readers,
        "runs": runs,
        "pss_ratio_after_questions": round(many["after_questions"]["pss_sum_mb"] / one["after_questions"]["pss_sum_mb"], 2),
        "rss_ratio_after_questions": round(many["after_questions"]["rss_sum_mb"] / one["after_questions"]["rss_sum_mb"], 2),
    }
    table = Table(title="enrich-rag serve: memory of the whole process tree after one question per worker")
    for column in ("worker processes", "load s", "answered", "RSS sum MB", "PSS sum MB (held)", "USS sum MB (private)"):
        table.add_column(column, justify="right")
    for run in runs:
        memory = run["after_questions"]
        answered = sum(a["status"] == 200 for a in run["answers"])
        table.add_row(
            str(run["processes"]),
            f"{run['load_s']:.0f}",
            f"{answered}/{len(run['answers'])}",
            f"{memory['rss_sum_mb']:,.0f}",
            f"{memory['pss_sum_mb']:,.0f}",
            f"{memory['uss_sum_mb']:,.0f}",
        )
    Console().print(table)
    modes = Table(title="the reader alone, per llm.weights mode (fresh process each)")
    for column in ("weights", "load s", "s / answer", "RSS MB", "file-backed (shareable) MB"):
        modes.add_column(column, justify="right")
    for r in readers:
        modes.add_row(r["weights"], str(r["load_s"]), str(r["s_per_answer"]), str(r["rss_mb"]), str(r["file_backed_mb"]))
    Console().print(modes)
    console.print(f"PSS {args.workers} workers / 1: {result['pss_ratio_after_questions']}x")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
