"""`python -m benchmarks NAME`: the one entry of the benchmarks."""

import subprocess
import sys

from tests.conftest import PROJECT_ROOT


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)


def test_it_lists_the_benchmarks_and_runs_one_by_name():
    listed = _run()
    assert listed.returncode == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()[2:] if line.strip()]
    assert {"search_read", "first_hour_demo", "reader_speed"} <= set(names) and "__main__" not in names
    helped = _run("first_hour_mcp", "--help")
    assert helped.returncode == 0 and "usage: python -m benchmarks first_hour_mcp" in helped.stdout and "--runs" in helped.stdout


def test_an_unknown_name_is_one_error():
    result = _run("no_such_benchmark")
    assert result.returncode == 2 and result.stderr.strip() == "error: no benchmark 'no_such_benchmark' (python -m benchmarks lists them)"
