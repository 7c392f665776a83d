"""The README's diagram of the loop, drawn from `enrich_rag.agent.loop.STAGES` (the loop's own list of its
stages, the steps each records and where each goes next), so the picture cannot drift from the code."""

from __future__ import annotations

import textwrap

from enrich_rag.agent.loop import ANSWERED, STAGES
from enrich_rag.agent.trace import StepKind

WIDTH = 104


def diagram_block() -> list[str]:
    """The diagram as README lines: a code block, one entry per stage in the loop's order."""
    order = list(StepKind)
    lines = ["```", "question"]
    for stage in STAGES:
        kinds = ", ".join(str(k) for k in sorted(stage.kinds, key=order.index))
        then = " | ".join(stage.then) or "the answer"
        text = f"{stage.does}  [{kinds} -> {then}]"
        lines += textwrap.wrap(text, WIDTH, initial_indent=f"├─ {stage.name}: ", subsequent_indent="│    ")
    lines += ["▼", *textwrap.wrap(ANSWERED, WIDTH)]
    return [*lines, "```"]
