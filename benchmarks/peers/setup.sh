#!/usr/bin/env bash
# A venv of its own for the peer systems (.venv-peers): their pins stay out of the project's .venv, and
# the project's packages (the reader, MiniLM, scoring) are read from .venv through a .pth file, after
# the peers' own. Run from the project root after scripts/run.sh has made .venv.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -m venv .venv-peers
.venv-peers/bin/pip install -q -r benchmarks/peers/requirements.txt
# MiniRAG's PyPI release fails at import (NameError: abstractmethod); its repository's head fixes it.
# MINIRAG_SOURCE: a local copy of that commit where GitHub cannot be reached.
.venv-peers/bin/pip install -q --no-deps "${MINIRAG_SOURCE:-git+https://github.com/HKUDS/MiniRAG@4fe2fba1bee7e18262bdbe6568644feed94d2f77}"
# HippoRAG 2's pins (torch 2.5.1, transformers 4.45.2, vllm 0.6.6.post1) do not resolve beside the project's.
.venv-peers/bin/pip install -q --no-deps hipporag==2.0.0a4 gritlm==1.0.2
site=$(.venv/bin/python -c 'import site; print(site.getsitepackages()[0])')
echo "$site" > "$(.venv-peers/bin/python -c 'import site; print(site.getsitepackages()[0])')/enrich_rag_project.pth"
echo "$PWD" >> "$(.venv-peers/bin/python -c 'import site; print(site.getsitepackages()[0])')/enrich_rag_project.pth"
.venv-peers/bin/python -c 'import lightrag, minirag, igraph, enrich_rag; print("peers venv ready:", lightrag.__version__)'
