"""Load on a served folder of documents, as the fast-answer issue measures it: `--clients` clients, each
asking `--questions` questions in turn, all at once, on a server that has answered nothing yet (cold),
then, with other questions, on the same server after it (warm). With `--folder` twice, one server serves
both as workspaces (one reader, one line) and the clients take turns between them.

Each question is asked once, with the server's write token (as the folder's owner asks): the outcome is
an answer (200), a refusal (503, which should come at once) or anything else (a 504 is a question that
was let in and then ran out of time; a 503 after a wait is one whose wait left it too little time to
answer). The questions are the folder's questions.jsonl, then its
related_questions.jsonl; the cold and the warm wave never share one.

    python -m benchmarks folder_load --folder data/own_documents/npm-docs --out bench_results/folder_load_npm.json
    python -m benchmarks folder_load --folder data/own_documents/npm-docs --folder data/own_documents/click-docs \
        --out bench_results/time_limit_wave_two_after.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.load_test import Client
from benchmarks.served_folder import PROJECT, served_folders
from enrich_rag.eval.metrics import exact_match
from enrich_rag.storage.atomic import atomic_file


def folder_questions(folder: Path) -> list[dict[str, Any]]:
    files = [folder / name for name in ("questions.jsonl", "related_questions.jsonl") if (folder / name).exists()]
    lines = [line for file in files for line in file.read_text(encoding="utf-8").splitlines()]
    return [json.loads(line) for line in lines if line.strip()]


def _json(text: str) -> dict[str, Any]:
    try:
        body = json.loads(text)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _health(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/api/health", timeout=30) as response:
        return json.loads(response.read())


@dataclass(frozen=True)
class Ask:
    client: Client  # with its workspace's write token
    path: str  # its workspace's query route
    question: dict[str, Any]


def wave(asks: list[list[Ask]], timeout: float) -> dict[str, Any]:
    """Client c asks `asks[c]` in turn; every client starts at once."""
    started = time.perf_counter()

    def one(c: int) -> list[dict[str, Any]]:
        rows = []
        for ask in asks[c]:
            q = ask.question
            asked = time.perf_counter() - started
            status, seconds, text, _ = ask.client.post(ask.path, {"question": q["question"], "allow_enrich": True}, timeout)
            row = {"client": c, "workspace": ask.path, "question": q["question"], "status": status, "asked_at_s": round(asked, 1)}
            row["seconds"] = round(seconds, 2)
            body = _json(text)
            row |= body.get("timing", {})  # waited in line / ran, as the server counted them
            if status == 200:
                row["right"] = bool(exact_match(body.get("answer") or "", q["answers"]))
                row["tokens"] = body.get("tokens")
                row["spent"] = body.get("spent")
            else:
                row["error"] = text[:160]
            rows.append(row)
        return rows

    with ThreadPoolExecutor(len(asks)) as pool:
        rows = [row for rows in pool.map(one, range(len(asks))) for row in rows]
    answered = [r["seconds"] for r in rows if r["status"] == 200]
    refused = [r["seconds"] for r in rows if r["status"] == 503]
    return {
        "asked": len(rows),
        "answered": len(answered),
        "refused_503": len(refused),
        "refused_after_waiting": sum(seconds >= 1.0 for seconds in refused),  # let in, then its wait left too little time
        "timed_out_504": sum(r["status"] == 504 for r in rows),
        "other": sum(r["status"] not in (200, 503, 504) for r in rows),
        "right": sum(bool(r.get("right")) for r in rows),
        "answer_p50_s": round(statistics.median(answered), 2) if answered else None,
        "answer_max_s": round(max(answered), 2) if answered else None,
        "refusal_max_s": round(max(refused), 3) if refused else None,
        "spent": sum(bool(r.get("spent")) for r in rows),  # answered with the best read when the bound was reached
        "wall_s": round(time.perf_counter() - started, 1),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--folder", type=Path, action="append", required=True, help="docs/, questions.jsonl (+ related_questions.jsonl); twice: 2 served"
    )
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--questions", type=int, default=3, help="per client and wave")
    parser.add_argument("--timeout", type=float, default=240, help="the client's own limit, above the server's")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    folders = {folder.name: folder for folder in args.folder}
    clients_of = {name: [c for c in range(args.clients) if c % len(folders) == i] for i, name in enumerate(folders)}
    questions = {name: folder_questions(folder) for name, folder in folders.items()}
    for name, asked in questions.items():
        needed = 2 * len(clients_of[name]) * args.questions
        if len(asked) < needed:
            raise SystemExit(f"{folders[name]} has {len(asked)} questions; two waves need {needed}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True, text=True).stdout.strip()
    waves: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, served_folders({n: f / "docs" for n, f in folders.items()}, Path(tmp)) as served:
        for w, name in enumerate(("cold", "warm")):
            asks: list[list[Ask]] = [[] for _ in range(args.clients)]
            for folder, clients in clients_of.items():
                prefix, token = served.workspaces[folder]
                client = Client(served.url, token)
                share = questions[folder][w * len(clients) * args.questions : (w + 1) * len(clients) * args.questions]
                for i, c in enumerate(clients):
                    asks[c] = [Ask(client, f"{prefix}/api/query", q) for q in share[i :: len(clients)]]
            before = _health(served.url)
            waves[name] = {"server_before": before} | wave(asks, args.timeout)
        waves["server_after"] = _health(served.url)
    result = {
        "commit": commit,
        "folders": [str(f) for f in args.folder],
        "clients": args.clients,
        "questions_per_client": args.questions,
        "build_s": served.build["seconds"],
        "server_warm_s": served.warm_s,
        **waves,
    }
    table = Table(title=f"{args.clients} clients x {args.questions} questions on {' + '.join(folders)}, commit {commit}")
    columns = ("server", "answered", "refused (503)", "of them after waiting", "timed out (504)", "other", "right", "answer p50 / max s")
    for column in (*columns, "refusal max s"):
        table.add_column(column)
    for name in ("cold", "warm"):
        w = waves[name]
        table.add_row(
            name,
            f"{w['answered']}/{w['asked']}",
            str(w["refused_503"]),
            str(w["refused_after_waiting"]),
            str(w["timed_out_504"]),
            str(w["other"]),
            str(w["right"]),
            f"{w['answer_p50_s']} / {w['answer_max_s']}",
            str(w["refusal_max_s"]),
        )
    Console().print(table)
    with atomic_file(Path(args.out)) as tmp_path:
        tmp_path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
