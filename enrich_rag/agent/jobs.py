"""The writes a question leads to, run now or later: an EnrichGraph round, a partition of learned facts.

An answer queues them (`agent.enrich_when: background`); `enrich-rag enrich --pending` and the server's
worker run them here, as the answer that queued them would have."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from enrich_rag.agent.enrich_graph import EnrichResult, enrich_graph
from enrich_rag.agent.learned import LEARNED, learned_tables
from enrich_rag.agent.resources import Resources
from enrich_rag.config import AgentConfig, Config
from enrich_rag.storage.enrichment_jobs import LEARN, EnrichmentJob
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge


def deep_extractor(config: Config) -> str:
    """The deep extractor's name when it is the LLM: then a chunk the seed read is still unread."""
    return "llm" if config.extraction.deep == "llm" else ""


@dataclass(frozen=True)
class Jobs:
    resources: Resources
    config: AgentConfig

    def enrich(self, question: str, facts: list[str], candidates: Sequence[Passage] = ()) -> EnrichResult:
        """One EnrichGraph round (also `enrich-rag enrich`)."""
        resources = self.resources
        return enrich_graph(
            question,
            facts,
            corpus=resources.retrieval().corpus,
            store=resources.store,
            extractor=lambda: resources.extractor,
            writer=resources.writer,
            llm=resources.llm if self.config.expansion == "llm" else None,
            limit_chunks=self.config.enrich_chunks,
            candidates=candidates,
            deep=deep_extractor(resources.config),
            targets=self.config.enrich_targets,
        )

    def learn(self, facts: Sequence[Edge]) -> dict[str, Any]:
        """Commit learned facts as one `learned-` partition (nothing when the graph holds them all)."""
        commit = self.resources.writer.commit(learned_tables(facts), prefix=LEARNED)
        return {"partition": commit.partition if commit else None, "facts": commit.edges if commit else 0}

    def run(self, job: EnrichmentJob) -> dict[str, Any]:
        """A queued round (or an answer's learned facts), as the answer that queued it would have run it."""
        if job.kind == LEARN:
            return self.learn([Edge.from_row(f) for f in job.learned])
        candidates = self.resources.passages.by_ids(list(job.candidates))
        return self.enrich(job.question, list(job.facts), candidates).record()
