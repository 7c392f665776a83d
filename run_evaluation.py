"""Evaluate EnrichRAG and its baselines on one benchmark: python run_evaluation.py --config configs/nq.yaml

The same command as `enrich-rag eval` (one entry point, one set of flags: --config, --params, --limit,
--methods); `--help` lists them."""

import sys

from enrich_rag.cli.main import app

if __name__ == "__main__":
    app(["eval", *sys.argv[1:]], prog_name="run_evaluation.py")
