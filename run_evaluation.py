"""Evaluate EnrichRAG and its baselines on one benchmark: python run_evaluation.py --config configs/nq.yaml

The same command as `enrich-rag eval` (one entry point, one set of flags: --config, --params, --limit,
--methods); `--help` lists them."""

import typer

from enrich_rag.cli.main import evaluate

if __name__ == "__main__":
    typer.run(evaluate)
