"""Route before planning: whether a question gets a Plan call, decided from what is already computed and
costs no reader call (the query analysis and the spaCy parse the bridge check reads).

A question is sent to the planner when it compares two named things (side-by-side hops), or when it
names a thing by a description that can be asked on its own ("the director of Inception"): the bridge
the planner would chain through. Anything else is read as one question, as the planner kept 98 of 100
NQ questions anyway, at the price of a reader call each (`bench_results/hop_latency.json`). With
`agent.compare_in_one_read` (the default) the loop reads a comparison as one before asking the router.
"""

from __future__ import annotations

from dataclasses import dataclass

from enrich_rag.agent.descriptions import BridgeSplit, bridge_split
from enrich_rag.evidence.query_analysis import COMPARISON, QueryAnalysis

PLAN, WHOLE = "plan", "whole"


@dataclass(frozen=True)
class Route:
    decision: str  # plan | whole
    reason: str  # comparison | description | no cue
    split: BridgeSplit | None = None  # the description found, where that decided it

    @property
    def plans(self) -> bool:
        return self.decision == PLAN


def route(analysis: QueryAnalysis, nlp) -> Route:
    if analysis.kind == COMPARISON:
        return Route(PLAN, "comparison")
    split = bridge_split(analysis.question, nlp)
    if split is not None:
        return Route(PLAN, "description", split)
    return Route(WHOLE, "no cue")
