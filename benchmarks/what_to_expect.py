"""What a user should expect, measured as a user meets it: build a folder of 100 documents, serve it warm
with the default reader, and ask its questions through the streaming API, without and then with
enrichment. The README's "what to expect" table is generated from the JSON this writes.

The folder is the bundled HotpotQA sample's first questions' passages (one markdown file per page) until
it holds `--documents`; the questions asked are those whose passages all made it in, so each has its
evidence in the folder. For every question: seconds to the first step on the stream, to the answer's
first token, and to the whole answer; exact match against the gold answer. Peak memory is the largest
resident set of the build command and of the server process. Run it on a quiet machine.

    python scripts/what_to_expect.py --documents 100 --out bench_results/what_to_expect.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.served_folder import served_folder
from enrich_rag.agent.trace import StepKind
from enrich_rag.eval.metrics import exact_match

PROJECT = Path(__file__).resolve().parents[1]
QUESTIONS = PROJECT / "data/benchmarks/hotpotqa_distractor/dev.jsonl"


def make_folder(folder: Path, documents: int) -> list[dict]:
    """One markdown file per page of the first questions' contexts; the questions whose pages all fit."""
    folder.mkdir(parents=True)
    titles: set[str] = set()
    asked = []
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        pages = {c["title"]: "".join(c["sentences"]).strip() for c in row["contexts"]}
        if len(titles | set(pages)) > documents:
            break
        for title, text in pages.items():
            if title not in titles:
                titles.add(title)
                (folder / f"page-{len(titles):04d}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        asked.append({"question": row["question"], "answers": row["answers"]})
    return asked


def streamed(url: str, question: str, enrich: bool, token: str | None, timeout: float) -> dict:
    """One question through the server's event stream, timed at its first step and at its answer."""
    body = json.dumps({"question": question, "allow_enrich": enrich, "stream": True}).encode()
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    start = time.perf_counter()
    first_step = None
    with urllib.request.urlopen(urllib.request.Request(f"{url}/api/query", body, headers), timeout=timeout) as response:
        for line in response:
            if not line.startswith(b"data: "):
                continue
            event = json.loads(line[6:])
            now = time.perf_counter() - start
            if event["event"] == "step" and first_step is None:
                first_step = now
            elif event["event"] == "error":
                return {"error": event["error"], "total_s": now}
            elif event["event"] == "answer":
                answer = event["answer"]
                return {
                    "first_step_s": round(first_step or now, 3),
                    "total_s": round(now, 3),
                    "answer": answer["answer"],
                    "sure": answer["sure"],
                    "confidence": answer.get("confidence"),
                    "enriched": bool(answer["trace"]["partitions_written"]),
                    "queued": bool(answer.get("queued")),  # a round queued to run after the answer (agent.enrich_when: background)
                    "llm_calls": sum(1 for s in answer["trace"]["steps"] if _reader_call(s)),
                    **(answer.get("tokens") or {}),  # prefill, cached and generated tokens, as the server's reader counted them
                }
    return {"error": "the stream ended without an answer"}


def _reader_call(step: dict) -> bool:
    """A step of the wire trace that asked the reader (a read of a context seen before is not asked again)."""
    kind = step["tool"]
    return kind in (StepKind.PLAN, StepKind.COMPARE) or (kind == StepKind.CHECK_SUFFICIENCY and not step["outputs"].get("reused"))


def summary(rows: list[dict], gold: list[list[str]]) -> dict:
    ok = [r for r in rows if "error" not in r]
    pct = lambda key, q: round(float(np.percentile([r[key] for r in ok], q)), 2) if ok else None  # noqa: E731
    return {
        "questions": len(rows),
        "errors": len(rows) - len(ok),
        "first_step_p50_s": pct("first_step_s", 50),
        "total_p50_s": pct("total_s", 50),
        "total_p95_s": pct("total_s", 95),
        "em": round(float(np.mean([bool(exact_match(r.get("answer") or "", g)) for r, g in zip(rows, gold)])), 3),
        "enriched_share": round(float(np.mean([r.get("enriched", False) for r in rows])), 3),
        "queued_share": round(float(np.mean([r.get("queued", False) for r in rows])), 3),
    } | {
        f"{key}_mean": round(float(np.mean([r[key] for r in ok])), 1)
        for key in ("llm_calls", "prefill_tokens", "cached_tokens", "generated_tokens")
        if ok and all(key in r for r in ok)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--enrich-questions", type=int, default=5, help="of the same questions, asked again with enrichment allowed")
    parser.add_argument("--timeout", type=float, default=180)
    parser.add_argument("--out", default="bench_results/what_to_expect.json")
    args = parser.parse_args()
    console = Console(stderr=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        folder, workspace = Path(tmp) / "my-docs", Path(tmp) / "ws"
        asked = make_folder(folder, args.documents)
        documents = len(list(folder.glob("*.md")))
        with served_folder(folder, workspace) as served:
            build, warm_s = served.build, served.warm_s
            console.print(f"built {documents} documents in {build['seconds']} s (peak {build['peak_rss_mb']} MB)")
            gold = [q["answers"] for q in asked]
            url, token = served.url, served.token
            plain = [streamed(url, q["question"], False, None, args.timeout) for q in tqdm(asked, desc="without enrichment", unit="q")]
            enriching = [
                streamed(url, q["question"], True, token, args.timeout)
                for q in tqdm(asked[: args.enrich_questions], desc="enrichment allowed", unit="q")
            ]
            server_peak = served.peak_rss_mb()
    result: dict[str, Any] = {
        "commit": commit,
        "reader": "default (params.yaml llm)",
        "cores": os.cpu_count(),
        "documents": documents,
        "build": {"seconds": build["seconds"], "peak_rss_mb": build["peak_rss_mb"]},
        "server_warm_s": warm_s,
        "server_peak_rss_mb": server_peak,
        "without_enrichment": summary(plain, gold),
        "enrichment_allowed": summary(enriching, gold[: args.enrich_questions]),
        "answers": {"without_enrichment": plain, "enrichment_allowed": enriching},
    }
    table = Table(title=f"what to expect: {documents} documents, {os.cpu_count()} cores, commit {commit}")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("build (enrich-rag build)", f"{build['seconds']} s, peak {build['peak_rss_mb']} MB")
    table.add_row("server ready", f"{warm_s} s, peak {server_peak} MB")
    for label, key in (("without enrichment", "without_enrichment"), ("enrichment allowed", "enrichment_allowed")):
        s = result[key]
        table.add_row(label, f"first step {s['first_step_p50_s']} s, answer {s['total_p50_s']} s (p50), EM {s['em']} over {s['questions']}")
    Console().print(table)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
