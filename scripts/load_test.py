"""Load test of the web service: concurrent clients asking with enrichment allowed, on one server.

A sandbox build (`sandbox.py`: bundled HotpotQA passages, a half-size seed so questions trigger
enrichment) in a temp dir; `enrich-rag serve` on a random loopback port; `--clients` threads each ask
`--questions` bundled questions (enrichment allowed), `--runs` times back to back on the same server.
After each run: every response's status, latency p50/p95, whether the server is alive, and
`GraphWriter.verify()` on the files (index rows = committed partitions' rows, DVC records =
partitions). Loopback only; every request has a client-side timeout.

`--maxima` first sets the page's settings to the most `/api/settings` allows (WEB_MAXIMA, LLM rerank)
and times single questions with enrichment, one at a time: what bounds one request's cost.

    python scripts/load_test.py --out bench_results/load_test.json
    python scripts/load_test.py --maxima --runs 0 --out bench_results/load_test_maxima.json
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from enrich_rag.config import load_config
from enrich_rag.serve.settings import WEB_MAXIMA
from sandbox import build_sandbox, sandbox_params, sandbox_questions

HOST = "127.0.0.1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _post(url: str, body: dict, timeout: float) -> tuple[int, float, str]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, text = response.status, ""
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode(errors="replace")[:200]
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        status, text = 0, str(exc)[:200]
    return status, time.perf_counter() - start, text


def _alive(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/api/graph/stats", timeout=30) as response:
            return response.status == 200
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        return False


def _verify(params: Path) -> tuple[list[str], int]:
    from enrich_rag.agent.resources import Resources
    from enrich_rag.storage.partitions import committed_partitions

    config = load_config(params)
    resources = Resources(config)
    problems = resources.writer.verify()
    resources.close()
    return problems, len(committed_partitions(Path(config.paths.graph))) - 1


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _big_body(base: str, pid: int, megabytes: int) -> dict:
    """A body far over the limit, as a hostile client would send it: refused how fast, at what memory cost."""
    before = _rss_mb(pid)
    body = b'{"question": "' + b"x" * (megabytes << 20) + b'"}'
    request = urllib.request.Request(f"{base}/api/query", body, {"content-type": "application/json"})
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, ConnectionError) as exc:  # the server may close before the client has sent it all
        status = f"closed: {exc}"[:80]
    return {"body_mb": megabytes, "status": status, "seconds": round(time.perf_counter() - start, 3),
            "server_rss_mb_before": round(before, 1), "server_rss_mb_after": round(_rss_mb(pid), 1)}


def _maxima(base: str, questions: list[str], count: int, timeout: float) -> dict:
    """One question at a time under the most expensive settings the page accepts."""
    status, _, text = _post(f"{base}/api/settings", {**WEB_MAXIMA, "rerank": "llm", "allow_enrich": True}, 60)
    if status != 200:
        raise SystemExit(f"/api/settings refused the maxima: {text}")
    timings = [_post(f"{base}/api/query", {"question": q, "allow_enrich": True}, timeout)[:2] for q in questions[:count]]
    _post(f"{base}/api/settings", {"rerank": "entity", "candidates": 10, "enrich_chunks": 4}, 60)
    return {"settings": {**WEB_MAXIMA, "rerank": "llm"}, "statuses": [st for st, _ in timings],
            "seconds": [round(sec, 1) for _, sec in timings]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--questions", type=int, default=5, help="per client and run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--passages", type=int, default=240)
    parser.add_argument("--model", default="gemma-270m", help="llm.model of the sandbox")
    parser.add_argument("--maxima", action="store_true", help="first time single questions at the page's maxima")
    parser.add_argument("--out", default="bench_results/load_test.json")
    args = parser.parse_args()
    console = Console(stderr=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    runs, maxima, probe = [], {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        params = sandbox_params(Path(tmp), args.passages, seed_share=0.5, llm={"model": args.model})
        build_sandbox(params)
        questions = sandbox_questions(params)
        config = load_config(params)
        port = _free_port()
        base = f"http://{HOST}:{port}"
        server = subprocess.Popen([str(Path(sys.executable).with_name("enrich-rag")), "serve", "--params", str(params),
                                   "--host", HOST, "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 300
            while not _alive(base):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"server did not start: {server.stderr.read()[-500:]}")
                time.sleep(1)
            _post(f"{base}/api/query", {"question": questions[0], "allow_enrich": False}, 300)  # warm: models load
            client_timeout = config.serve.query_timeout_s + 30
            probe = _big_body(base, server.pid, 20)
            console.print(f"20 MB body: {probe}")
            if args.maxima:
                maxima = _maxima(base, questions, 5, client_timeout)
                console.print(f"at the page's maxima: {maxima}")
            for run in range(args.runs):
                jobs = [(c, questions[(run * args.clients * args.questions + c * args.questions + q) % len(questions)])
                        for c in range(args.clients) for q in range(args.questions)]
                started = time.perf_counter()

                def client(c: int) -> list[tuple[int, float, str]]:
                    return [_post(f"{base}/api/query", {"question": q, "allow_enrich": True}, client_timeout)
                            for cc, q in jobs if cc == c]

                with ThreadPoolExecutor(args.clients) as pool:
                    results = [r for rs in pool.map(client, range(args.clients)) for r in rs]
                wall = time.perf_counter() - started
                alive = server.poll() is None and _alive(base)
                problems, partitions = _verify(params)
                ok = [s for status, s, _ in results if status == 200]
                errors = [f"{status}: {text}" for status, _, text in results if status != 200]
                runs.append({"run": run + 1, "requests": len(results), "ok": len(ok), "errors": len(errors),
                             "error_samples": errors[:5], "p50_s": round(statistics.median(ok), 2) if ok else None,
                             "p95_s": round(float(np.percentile(ok, 95)), 2) if ok else None, "wall_s": round(wall, 1),
                             "server_alive": alive, "partitions": partitions, "verify": problems})
                console.print(f"run {run + 1}: {len(ok)}/{len(results)} ok, {len(errors)} errors, alive={alive}, "
                              f"partitions={partitions}, verify={problems or 'consistent'}")
        finally:
            server.terminate()
            server.wait(timeout=60)
    table = Table(title=f"load test: {args.clients} clients x {args.questions} questions, enrichment allowed, "
                        f"half-size seed, reader {args.model}")
    for column in ("run", "ok", "errors", "p50 s", "p95 s", "wall s", "server alive", "partitions", "verify"):
        table.add_column(column)
    for r in runs:
        table.add_row(str(r["run"]), f"{r['ok']}/{r['requests']}", str(r["errors"]), str(r["p50_s"]), str(r["p95_s"]),
                      str(r["wall_s"]), str(r["server_alive"]), str(r["partitions"]), "; ".join(r["verify"]) or "consistent")
    if runs:
        Console().print(table)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"clients": args.clients, "questions": args.questions, "model": args.model,
                                          "query_timeout_s": config.serve.query_timeout_s, "runs": runs, "maxima": maxima,
                                          "big_body": probe},
                                         indent=2) + "\n")


if __name__ == "__main__":
    main()
