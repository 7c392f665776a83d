"""Stage build_graph_index: graph partitions -> txtai index over node and edge text."""

from enrich_rag.stages.indexes import build_graph_index
from enrich_rag.stages.stage import run_stage

if __name__ == "__main__":
    run_stage("build_graph_index", build_graph_index)
