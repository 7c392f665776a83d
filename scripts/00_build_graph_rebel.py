"""Stage build_seed_graph: chunks -> graph/{nodes,edges}/partition=seed (extractor from params.yaml).

The name is historical (REBEL was the first extractor); `extraction.extractor` picks spacy or rebel.
"""

from enrich_rag.stages.seed_graph import build_seed_graph
from enrich_rag.stages.stage import run_stage

if __name__ == "__main__":
    run_stage("build_seed_graph", build_seed_graph)
