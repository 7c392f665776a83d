"""Stage build_seed_graph: chunks -> graph/{nodes,edges,links}/partition=seed (`extraction.extractor`:
spacy by default, or rebel)."""

from enrich_rag.stages.seed_graph import build_seed_graph
from enrich_rag.stages.stage import run_stage

if __name__ == "__main__":
    run_stage("build_seed_graph", build_seed_graph)
