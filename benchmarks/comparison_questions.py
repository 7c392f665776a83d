"""The dev questions the query analysis calls comparisons, written as a question file of their own.

`agent.compare_in_one_read` changes only how a comparison is read: every other question takes the same
path with the setting on or off. Running both settings on a slice's comparisons alone gives the
setting's paired difference over the whole slice (the others differ by 0), at a fraction of the time.

    python -m benchmarks comparison_questions --config configs/hotpotqa.yaml --last 160 \\
        --out testsets/comparisons/hotpotqa_dev1-160.jsonl

The analysis is the loop's own: the spaCy parse and the names of the set's built graph.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from enrich_rag.config import load_config
from enrich_rag.evidence.query_analysis import COMPARISON, analyze_query
from enrich_rag.extract.spacy_extractor import load_spacy
from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.graph_store import GraphStore

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True, help="the set's config: its questions and its built graph")
    parser.add_argument("--first", type=int, default=1)
    parser.add_argument("--last", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    config = load_config(ROOT / "params.yaml", args.config)
    nlp, store = load_spacy(config.extraction.spacy_model), GraphStore(config.paths.graph)
    lines = (ROOT / config.eval.questions).read_text(encoding="utf-8").splitlines()[args.first - 1 : args.last]
    kept = [line for line in lines if analyze_query(json.loads(line)["question"], nlp, store).kind == COMPARISON]
    store.close()
    with atomic_file(args.out) as tmp:
        tmp.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
    print(f"{len(kept)} of {len(lines)} questions ({args.first}-{args.last}) are comparisons: {args.out}")


if __name__ == "__main__":
    main()
