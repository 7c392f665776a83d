"""Stage summary: counts and sizes of everything the build wrote -> data/build_summary.json."""

from rich.console import Console

from enrich_rag.stages.stage import run_stage
from enrich_rag.stages.summary import build_summary, summary_table


def _summary(config):
    summary = build_summary(config)
    Console().print(summary_table(summary))
    return summary


if __name__ == "__main__":
    run_stage("summary", _summary)
