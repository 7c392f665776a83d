"""Load test of the web service: concurrent clients asking, on one server with the default reader.

A sandbox build (`sandbox.py`: bundled HotpotQA passages, a half-size seed so questions trigger
enrichment) in a temp dir; `enrich-rag serve` on a random loopback port, the write token sent so
questions may enrich. First one client asks a run's questions in turn (the baseline rate); then for
each `--clients` count, `--runs` times, that many threads each ask `--questions` questions at once.
A refused question (503) is retried after the server's `Retry-After`, as a client would. After each
run: statuses (answered, immediate 503s, anything else), latency p50/p95 of the answered ones against
the time limit, answers per minute against the baseline, the server alive, its RSS (start, end, peak,
sampled every second), and `GraphWriter.verify()` on the files. `--soak N` then asks N questions in
turn and records RSS every 50.

    python -m benchmarks load_test --out bench_results/load_test.json
    python -m benchmarks load_test --maxima --runs 0 --out bench_results/load_test_maxima.json
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
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.sandbox import build_sandbox, sandbox_params, sandbox_questions
from enrich_rag.config import load_config
from enrich_rag.serve.settings import WEB_MAXIMA
from enrich_rag.storage.atomic import atomic_file

HOST = "127.0.0.1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Client:
    """Posts with the server's write token; a 503 is waited out for its Retry-After and asked again.
    `post` returns the status, seconds, the body (an error's first 200 characters) and the Retry-After."""

    def __init__(self, base: str, token: str, allow_enrich: bool = True):
        self.base, self.token, self.allow_enrich = base, token, allow_enrich

    def post(self, path: str, body: dict, timeout: float) -> tuple[int, float, str, dict]:
        headers = {"content-type": "application/json", "authorization": f"Bearer {self.token}"}
        request = urllib.request.Request(f"{self.base}{path}", json.dumps(body).encode(), headers)
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, text, retry = response.status, response.read().decode(), {}
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode(errors="replace")[:200]
            retry = {"retry_after": float(exc.headers.get("Retry-After") or 0)}
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            status, text, retry = 0, str(exc)[:200], {}
        return status, time.perf_counter() - start, text, retry

    def ask(self, question: str, timeout: float, refusals: list[float]) -> tuple[int, float, str]:
        """Until answered (or failed otherwise); each 503's latency goes to `refusals`."""
        while True:
            status, seconds, text, retry = self.post("/api/query", {"question": question, "allow_enrich": self.allow_enrich}, timeout)
            if status != 503:
                return status, seconds, text
            refusals.append(seconds)
            time.sleep(retry.get("retry_after", 1.0))


def _alive(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/api/health", timeout=30) as response:
            return response.status == 200
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        return False


def _verify(params: Path) -> tuple[list[str], int]:
    from enrich_rag.api import EnrichRAG
    from enrich_rag.storage.partitions import committed_partitions

    config = load_config(params)
    with EnrichRAG(config, reconcile=False) as session:
        problems = session.resources.writer.verify()
    return problems, len(committed_partitions(Path(config.paths.graph))) - 1


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class RssSampler:
    """The server's RSS every second while a run lasts: start, end and peak."""

    def __init__(self, pid: int):
        self.pid, self.samples, self._stop = pid, [_rss_mb(pid)], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self.samples.append(_rss_mb(self.pid))

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        self.samples.append(_rss_mb(self.pid))
        return {
            "rss_start_mb": round(self.samples[0], 1),
            "rss_end_mb": round(self.samples[-1], 1),
            "rss_peak_mb": round(max(self.samples), 1),
        }


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
    return {
        "body_mb": megabytes,
        "status": status,
        "seconds": round(time.perf_counter() - start, 3),
        "server_rss_mb_before": round(before, 1),
        "server_rss_mb_after": round(_rss_mb(pid), 1),
    }


def _maxima(client: Client, questions: list[str], count: int, timeout: float) -> dict:
    """One question at a time under the most expensive settings the page accepts."""
    status, _, text, _ = client.post("/api/settings", {**WEB_MAXIMA, "rerank": "llm", "allow_enrich": True}, 60)
    if status != 200:
        raise SystemExit(f"/api/settings refused the maxima: {text}")
    timings = [client.ask(q, timeout, [])[:2] for q in questions[:count]]
    client.post("/api/settings", {"rerank": "entity", "candidates": 10}, 60)
    return {
        "settings": {**WEB_MAXIMA, "rerank": "llm"},
        "statuses": [st for st, _ in timings],
        "seconds": [round(sec, 1) for _, sec in timings],
    }


def _run(client: Client, jobs: list[tuple[int, str]], clients: int, timeout: float, limit_s: float, pid: int) -> dict:
    """`jobs`: (client, question); each client asks its questions in turn, all clients at once."""
    refusals: list[float] = []
    rss = RssSampler(pid)
    started = time.perf_counter()

    def one(c: int) -> list[tuple[int, float, str]]:
        return [client.ask(q, timeout, refusals) for cc, q in jobs if cc == c]

    with ThreadPoolExecutor(clients) as pool:
        results = [r for rs in pool.map(one, range(clients)) for r in rs]
    wall = time.perf_counter() - started
    ok = [sec for status, sec, _ in results if status == 200]
    errors = [f"{status}: {text}" for status, _, text in results if status != 200]
    return {
        "clients": clients,
        "requests": len(results),
        "answered": len(ok),
        "errors": len(errors),
        "error_samples": errors[:5],
        "refused_503": len(refusals),
        "refusal_p95_ms": round(float(np.percentile(refusals, 95)) * 1000, 1) if refusals else None,
        "p50_s": round(statistics.median(ok), 2) if ok else None,
        "p95_s": round(float(np.percentile(ok, 95)), 2) if ok else None,
        "max_s": round(max(ok), 2) if ok else None,
        "within_limit": all(sec <= limit_s + 1 for sec in ok),
        "wall_s": round(wall, 1),
        "answers_per_min": round(len(ok) / wall * 60, 2),
    } | rss.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[6, 12])
    parser.add_argument("--questions", type=int, default=3, help="per client and run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--passages", type=int, default=240)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct", help="llm.model of the sandbox")
    parser.add_argument("--maxima", action="store_true", help="first time single questions at the page's maxima")
    parser.add_argument("--soak", type=int, default=0, help="then ask this many questions in turn, RSS every 50")
    parser.add_argument(
        "--no-enrich", action="store_true", help="questions may not enrich: the reader's queue alone, ~6 s a question instead of ~40"
    )
    parser.add_argument("--out", default="bench_results/load_test.json")
    args = parser.parse_args()
    console = Console(stderr=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    runs: list[dict[str, Any]] = []
    soak: list[dict[str, Any]] = []
    maxima: dict[str, Any] = {}
    probe: dict[str, Any] = {}
    baseline: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        params = sandbox_params(
            Path(tmp), args.passages, seed_share=0.5, llm={"model": args.model}, agent={"enrich_chunks": 2, "expansion": "llm"}
        )
        build_sandbox(params)
        questions = sandbox_questions(params)
        config = load_config(params)
        port = _free_port()
        base = f"http://{HOST}:{port}"
        server = subprocess.Popen(
            [str(Path(sys.executable).with_name("enrich-rag")), "serve", "--params", str(params), "--host", HOST, "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 300
            while not _alive(base):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"server did not start: {server.communicate()[1][-500:]}")
                time.sleep(1)
            client = Client(base, (Path(config.paths.root) / "serve_token").read_text().strip(), not args.no_enrich)
            limit_s = config.serve.query_timeout_s
            client_timeout = limit_s + 30
            client.post("/api/query", {"question": questions[0], "allow_enrich": False}, 300)  # warm: models load
            probe = _big_body(base, server.pid, 20)
            console.print(f"20 MB body: {probe}")
            if args.maxima:
                maxima = _maxima(client, questions, 5, client_timeout)
                console.print(f"at the page's maxima: {maxima}")

            def save() -> None:
                """Written after every run and soak step, so a run cut short keeps what it measured."""
                Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                result = {"clients": args.clients, "questions": args.questions, "model": args.model,
                          "allow_enrich": not args.no_enrich, "query_timeout_s": config.serve.query_timeout_s,
                          "baseline": baseline, "runs": runs,
                          "soak": soak, "maxima": maxima, "big_body": probe}  # fmt: skip
                with atomic_file(args.out) as tmp:
                    tmp.write_text(json.dumps(result, indent=2) + "\n")

            offset = 1
            if args.runs:
                n = args.clients[0] * args.questions
                baseline = _run(client, [(0, q) for q in questions[offset : offset + n]], 1, client_timeout, limit_s, server.pid)
                offset += n
                console.print(f"one client in turn: {baseline}")
                save()
            for clients in args.clients:
                for run in range(args.runs):
                    n = clients * args.questions
                    batch = [questions[(offset + i) % len(questions)] for i in range(n)]
                    offset += n
                    jobs = [(i % clients, q) for i, q in enumerate(batch)]
                    result = _run(client, jobs, clients, client_timeout, limit_s, server.pid)
                    alive = server.poll() is None and _alive(base)
                    problems, partitions = _verify(params)
                    result |= {
                        "run": run + 1,
                        "server_alive": alive,
                        "partitions": partitions,
                        "verify": problems,
                        "rate_vs_baseline": round(result["answers_per_min"] / baseline["answers_per_min"], 3)
                        if baseline.get("answers_per_min")
                        else None,
                    }
                    runs.append(result)
                    console.print(f"{clients} clients, run {run + 1}: {result}")
                    save()
            if args.soak:
                rss = RssSampler(server.pid)
                for i in range(args.soak):
                    client.ask(questions[(offset + i) % len(questions)], client_timeout, [])
                    if (i + 1) % 50 == 0:
                        soak.append({"questions": i + 1, "rss_mb": round(_rss_mb(server.pid), 1)})
                        console.print(f"soak: {soak[-1]}")
                        save()
                soak.append({"peak_rss_mb": rss.stop()["rss_peak_mb"]})
                save()
        finally:
            server.terminate()
            server.wait(timeout=60)
    table = Table(
        title=f"load test: clients x {args.questions} questions, enrichment {'not ' * args.no_enrich}allowed, half-size seed, "
        f"reader {args.model}, limit {config.serve.query_timeout_s:g} s"
    )
    for column in (
        "clients",
        "run",
        "answered",
        "errors",
        "503s (p95 ms)",
        "p50 s",
        "p95 s",
        "answers/min",
        "vs 1 client",
        "RSS start/end/peak MB",
        "alive",
        "verify",
    ):
        table.add_column(column)
    for r in [baseline | {"run": "baseline", "rate_vs_baseline": 1.0, "server_alive": True, "verify": []}] * bool(baseline) + runs:
        table.add_row(
            str(r["clients"]),
            str(r["run"]),
            f"{r['answered']}/{r['requests']}",
            str(r["errors"]),
            f"{r['refused_503']} ({r['refusal_p95_ms']})",
            str(r["p50_s"]),
            str(r["p95_s"]),
            str(r["answers_per_min"]),
            str(r["rate_vs_baseline"]),
            f"{r['rss_start_mb']}/{r['rss_end_mb']}/{r['rss_peak_mb']}",
            str(r["server_alive"]),
            "; ".join(r["verify"]) or "consistent",
        )
    if runs or baseline:
        Console().print(table)
    save()


if __name__ == "__main__":
    main()
