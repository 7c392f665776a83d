"""A newcomer's first minutes, measured: a fresh clone of this commit runs `scripts/run.sh demo` as the
README says (create .venv, install from pip's cache, build the bundled docs folder, answer 5 questions).

Written: the run's log (each line with its seconds since the start), and JSON with the install's
seconds, the demo's own report (build, loading, each answer's seconds and reader calls, right or not),
the seconds from the demo's start to its first answer, and `git status --porcelain` after the run
(empty: the demo changed no tracked file).

    python -m benchmarks.first_hour_demo --out bench_results/first_hour_demo.json
    python -m benchmarks.first_hour_demo --cold --out bench_results/first_hour_demo_cold.json   # no package cache
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from enrich_rag.storage.atomic import atomic_file

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench_results/first_hour_demo.json")
    parser.add_argument("--cold", action="store_true", help="install with no package cache (pip's and uv's), as a first install")
    args = parser.parse_args()
    env = os.environ | ({"PIP_NO_CACHE_DIR": "1", "UV_NO_CACHE": "1"} if args.cold else {})
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "enrich-rag"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        log, start, demo_start = [], time.perf_counter(), None
        process = subprocess.Popen(
            ["bash", "-c", "scripts/run.sh demo --json 2>&1 1>demo.json"], cwd=clone, env=env, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        assert process.stdout is not None
        for line in process.stdout:
            at = time.perf_counter() - start
            if demo_start is None and line.startswith("building "):  # the first line of `enrich-rag demo`
                demo_start = at
            log.append(f"{at:8.1f}s  {line.rstrip()}")
        rc = process.wait()
        total_s = time.perf_counter() - start
        # stdout is the install's (pip) and then the demo's JSON report, which starts a line with "{"
        printed = (clone / "demo.json").read_text(encoding="utf-8")
        report = json.loads(printed[printed.rfind("\n{") + 1 :]) if rc == 0 else None
        (clone / "demo.json").unlink(missing_ok=True)  # written by this benchmark, not by the demo
        status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True).stdout
    rows = report["questions"] if report else []
    result = {
        "commit": commit,
        "package_cache": "none" if args.cold else "as found",
        "exit_code": rc,
        "total_s": round(total_s, 1),
        "install_s": round(demo_start, 1) if demo_start is not None else None,
        "demo": report,
        "first_answer_s_since_demo_start": rows[0]["answered_at_s"] if rows else None,
        "answer_seconds": [r["seconds"] for r in rows],
        "reader_calls": [r["reader_calls"] for r in rows],
        "right": sum(r["correct"] for r in rows),
        "git_status_porcelain": status,
    }
    log_path = args.out.with_suffix(".log")
    with atomic_file(log_path) as tmp_log:
        tmp_log.write_text("\n".join(log) + "\n", encoding="utf-8")
    with atomic_file(args.out) as tmp_out:
        tmp_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"install {result['install_s']} s; first answer {result['first_answer_s_since_demo_start']} s after the demo's start; "
        f"answers {result['answer_seconds']} s; {result['right']} of {len(rows)} right; git status: {status.strip() or 'clean'}"
    )


if __name__ == "__main__":
    main()
