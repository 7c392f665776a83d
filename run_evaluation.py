"""Evaluate EnrichRAG and its baselines on one benchmark: python run_evaluation.py --config configs/nq.yaml"""

import argparse
import sys

from rich.console import Console

from enrich_rag.errors import EnrichRagError
from enrich_rag.eval.runner import run_evaluation

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", required=True, help="configs/<dataset>.yaml (overlay on params.yaml)")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--limit", type=int, default=0, help="only the first N sampled questions (a smoke run)")
    parser.add_argument("--methods", nargs="+", default=(), help="run only these of the config's methods now")
    args = parser.parse_args()
    try:
        run_evaluation(args.params, args.config, args.limit, tuple(args.methods))
    except EnrichRagError as exc:
        Console(stderr=True, soft_wrap=True).print(f"[red]error[/red] {exc}")
        sys.exit(1)
    except KeyboardInterrupt:
        Console(stderr=True).print("interrupted: finished answers are saved; rerun the same command to resume")
        sys.exit(130)
