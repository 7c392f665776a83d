"""How long the README's test command takes: lint, format, types and the whole suite, each timed, the
tests counted and the slowest listed (from pytest's JUnit XML: set-up, call and tear-down together).
The pytest command is read from `scripts/run.sh test`, so what is timed is what the README runs.

A run is kept in `--out` under `--label` (e.g. `before`, `after`), so one file holds both sides, and a
later run of the same commit joins its label's runs; run it
on quiet cores (llama.cpp spin-waits: a busy core slows the model tests several-fold). `--marker` times
only the tests that expression selects (`not slow and not integration`: the fast layer).

    python -m benchmarks suite_time --label after --runs 2
    python -m benchmarks suite_time --label after --marker "not slow and not integration"
    python -m benchmarks suite_time --label after --clean-clone          # `.ci/run` on a fresh clone
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from rich.console import Console
from rich.table import Table

PROJECT = Path(__file__).resolve().parents[1]
CHECKS = {"ruff check": ["ruff", "check", "."], "ruff format": ["ruff", "format", "--check", "."], "mypy": ["mypy"]}


def readme_pytest() -> list[str]:
    """The pytest command of `scripts/run.sh test` (the README's test command), as it stands."""
    script = (PROJECT / "scripts/run.sh").read_text(encoding="utf-8")
    branch = script[script.index("\n  test)") :]
    line = next(line.split("#")[0].strip() for line in branch.splitlines() if line.strip().startswith("python -m pytest"))
    return [sys.executable, *shlex.split(line)[1:]]


def run_phase(command: list[str], env: dict[str, str]) -> dict:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=PROJECT, env=env, capture_output=True, text=True)
    return {
        "command": " ".join(command),
        "returncode": result.returncode,
        "seconds": round(time.perf_counter() - start, 1),
        "tail": (result.stdout + result.stderr).strip().splitlines()[-3:],
    }


def read_junit(path: Path, slowest: int) -> dict:
    """Counts by outcome and the slowest tests of one pytest run."""
    cases: list[dict] = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        cases.append({"test": f"{case.get('classname')}::{case.get('name')}", "seconds": float(case.get("time") or 0), "outcome": outcome})
    counts: dict[str, int] = {}
    for row in cases:
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    top = sorted(cases, key=lambda c: -c["seconds"])[:slowest]
    return {"tests": len(cases), "outcomes": counts, "slowest": [{"test": c["test"], "seconds": round(c["seconds"], 2)} for c in top]}


def one_run(marker: str | None, env: dict[str, str], slowest: int, keep: Path | None) -> dict:
    phases = {name: run_phase(command, env) for name, command in ([] if marker else CHECKS.items())}
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        command = [*readme_pytest(), "-p", "no:cacheprovider", f"--junitxml={junit}"]
        phases["pytest"] = run_phase([*command, *(["-m", marker] if marker else [])], env)
        tests = read_junit(junit, slowest) if junit.is_file() else {"tests": 0, "outcomes": {}, "slowest": []}
        if keep and junit.is_file():
            keep.write_bytes(junit.read_bytes())
    return {"seconds": round(sum(p["seconds"] for p in phases.values()), 1), "phases": phases, **tests}


def head() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True, text=True).stdout.strip()


def save(out: Path, key: str, entry: dict) -> None:
    """`entry` under `key` in the results file; runs of the same code join the runs already there."""
    results = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    earlier = results.get(key, {})
    if earlier.get("commit") == entry["commit"] and earlier.get("uncommitted_changes") == entry.get("uncommitted_changes"):
        entry = entry | {"runs": earlier["runs"] + entry["runs"]}
    results[key] = entry
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out)


def clean_clone_ci(cold: bool) -> dict:
    """`.ci/run` on a fresh clone of HEAD, as CI runs it: its wall time, the install apart (the seconds
    `scripts/run.sh` prints when it has installed) and the rest (lint, types, tests)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")} | {"CI": "true"}
    env["PATH"] = ":".join(p for p in env["PATH"].split(":") if ".venv" not in p)
    if cold:
        env |= {"PIP_NO_CACHE_DIR": "1", "UV_NO_CACHE": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "enrich-rag"
        subprocess.run(["git", "clone", "-q", str(PROJECT), str(clone)], check=True)
        start = time.perf_counter()
        result = subprocess.run(["bash", ".ci/run"], cwd=clone, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    output = result.stdout + result.stderr
    installed = re.search(r"^installed \.\[[^\]]*\] in (\d+) s$", output, re.M)
    install_s = int(installed.group(1)) if installed else None
    summary = [line for line in output.splitlines() if re.search(r"\d+ passed", line)]
    return {
        "returncode": result.returncode,
        "package_cache": "none" if cold else "as found",
        "seconds": round(wall, 1),
        "install_s": install_s,
        "after_install_s": round(wall - install_s, 1) if install_s is not None else None,
        "pytest_summary": summary[-1] if summary else None,
        "tail": output.strip().splitlines()[-12:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="which side this is, e.g. before or after")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--marker", default=None, help="a pytest -m expression: time only those tests (no lint)")
    parser.add_argument("--slowest", type=int, default=10)
    parser.add_argument("--out", default="bench_results/test_time.json")
    parser.add_argument("--keep-junit", type=Path, default=None, help="also keep the last run's JUnit XML here (every test's time)")
    parser.add_argument("--clean-clone", action="store_true", help="time `.ci/run` on a fresh clone of HEAD instead")
    parser.add_argument("--cold", action="store_true", help="with --clean-clone: install with no package cache")
    args = parser.parse_args()
    console = Console(stderr=True)
    if args.clean_clone:
        run = clean_clone_ci(args.cold)
        console.print({k: v for k, v in run.items() if k != "tail"})
        save(Path(args.out), f"{args.label} .ci/run clean clone", {"commit": head(), "cores": os.cpu_count(), "runs": [run]})
        return
    env = os.environ | {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    commit = head()
    status = subprocess.run(["git", "status", "--porcelain", "--", "enrich_rag", "tests"], cwd=PROJECT, capture_output=True, text=True)
    dirty = bool(status.stdout)
    runs = []
    for index in range(args.runs):
        console.print(f"[bold]{args.label}[/bold] run {index + 1} of {args.runs}" + (f" (-m {args.marker!r})" if args.marker else ""))
        runs.append(one_run(args.marker, env, args.slowest, args.keep_junit))
    key = args.label + (f" -m {args.marker}" if args.marker else "")
    save(Path(args.out), key, {"commit": commit, "uncommitted_changes": dirty, "cores": os.cpu_count(), "runs": runs})

    table = Table(title=f"{key} ({commit})")
    for column in ("run", "whole s", *runs[0]["phases"], "tests", "outcomes"):
        table.add_column(column)
    for index, run in enumerate(runs, 1):
        phases = [f"{p['seconds']:.1f}" for p in run["phases"].values()]
        table.add_row(str(index), f"{run['seconds']:.1f}", *phases, str(run["tests"]), json.dumps(run["outcomes"]))
    console.print(table)
    slow = Table(title="slowest tests (last run)")
    slow.add_column("test")
    slow.add_column("s", justify="right")
    for row in runs[-1]["slowest"]:
        slow.add_row(row["test"], f"{row['seconds']:.1f}")
    console.print(slow)


if __name__ == "__main__":
    main()
