"""Pick the demo's enrichment question from an evaluation run: one the seed graph answered wrongly (or
unsurely) and the enriching loop answered right (`eval/story.py`), written with the run it came from.

    python -m benchmarks pick_demo_question results/hotpotqa_pool/<run>/predictions.jsonl  # -> data/demo_enrichment.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from enrich_rag.eval.runner import read_predictions
from enrich_rag.eval.story import STORY_FILE, pick


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions", type=Path, help="predictions.jsonl of a run with both methods, over the default build")
    parser.add_argument("--config", default="", help="the config overlay the run used (its build tells the story); none: the default build")
    parser.add_argument("--out", type=Path, default=STORY_FILE)
    args = parser.parse_args()
    story = pick(read_predictions(args.predictions))
    if story is None:
        raise SystemExit(f"{args.predictions}: no question that enrichment turned from wrong (or unsure) to right")
    args.out.write_text(
        json.dumps(story | {"source": str(args.predictions), "config": args.config}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"{story['question']} -> {args.out}")


if __name__ == "__main__":
    main()
