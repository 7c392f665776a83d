"""One opened project: the only place that opens a store, reconciles it and builds an agent.

The Python API (`EnrichRAG`) owns one; the CLI goes through that, and the server and the evaluation
runner hold one each (they sit below the API). Whatever a killed write left is finished or undone
before the first question (`reconcile`), unless the caller only inspects (`graph verify` must see
the graph as it is).
"""

from __future__ import annotations

from enrich_rag.agent.loop import Agent
from enrich_rag.agent.resources import Resources
from enrich_rag.config import AgentConfig, Config, EvidenceConfig
from enrich_rag.extract.base import Extractor
from enrich_rag.llm.base import LLM
from enrich_rag.storage.graph_writer import Reconciliation


class Session:
    def __init__(self, config: Config, llm: LLM | None = None, extractor: Extractor | None = None, reconcile: bool = True):
        self.config = config
        self.resources = Resources(config, llm=llm, extractor=extractor)
        self.repaired: Reconciliation | None = None  # what reconciling changed
        self.unreconciled = ""  # why reconciling could not write (a folder this user may only read)
        if reconcile:
            try:
                self.repaired = self.resources.writer.reconcile()
            except OSError as exc:
                self.unreconciled = str(exc).splitlines()[0]
        self._agent: Agent | None = None

    def agent(self, agent: AgentConfig | None = None, evidence: EvidenceConfig | None = None) -> Agent:
        """The loop with the project's settings, or with these agent and evidence settings (a method of
        the evaluation, the web page's saved settings)."""
        default = agent is None and evidence is None
        if default and self._agent is not None:
            return self._agent
        built = Agent(self.resources, agent or self.config.agent, evidence or self.config.evidence)
        if default:
            self._agent = built
        return built

    def close(self) -> None:
        self.resources.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
