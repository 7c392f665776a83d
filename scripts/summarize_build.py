"""Stage summary: counts and sizes of everything the build wrote -> data/build_summary.json. The graph's
counts come through the project's door (`EnrichRAG`), opened without reconciling: the stage only reads."""

from rich.console import Console

from enrich_rag.api import EnrichRAG
from enrich_rag.stages.stage import run_stage
from enrich_rag.stages.summary import build_summary, summary_table


def _summary(config):
    with EnrichRAG(config, reconcile=False) as rag:
        summary = build_summary(config, rag.graph.stats())
    Console().print(summary_table(summary))
    return summary


if __name__ == "__main__":
    run_stage("summary", _summary)
