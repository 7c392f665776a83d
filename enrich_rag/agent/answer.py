"""What a caller hands the loop and gets back: the question checked, when its enrichment runs, the Answer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from enrich_rag.agent.trace import Trace
from enrich_rag.config import AgentConfig
from enrich_rag.evidence.citations import Citation, citation_from_dict
from enrich_rag.evidence.query_analysis import QueryError
from enrich_rag.evidence.quote import Quote

NOT_FOUND = "Not found in the documents"  # the answer when `agent.abstain` and the loop stays unsure
NEVER, NOW, BACKGROUND = "never", "now", "background"  # when a question's enrichment runs (`enrich=`)


def enrich_when(config: AgentConfig, enrich: str | None) -> str | None:
    """When a question's enrichment runs (None: never): a caller's "never", "now" or "background"; for
    None, the project's `agent.enrich_when` where `agent.allow_enrich`."""
    if enrich is None:
        return config.enrich_when if config.allow_enrich else None
    if enrich == NEVER:
        return None
    if enrich in (NOW, BACKGROUND):
        return str(enrich)
    raise QueryError(f"enrich must be 'never', 'now' or 'background' (or None: the project's setting), not {enrich!r}")


def permitted(allowed: bool | None, config: AgentConfig) -> str | None:
    """A yes/no permission to write (a CLI flag, a request's `allow_enrich`, an MCP server's `--enrich`)
    as the loop's `enrich`: yes is the project's `agent.enrich_when`, no is never, None the project's
    settings."""
    if allowed is None:
        return None
    return config.enrich_when if allowed else NEVER


@dataclass(kw_only=True)
class Answer:
    question: str
    answer: str
    perplexity: float
    sure: bool  # the loop's own verdict: the fitted confidence, or the perplexity rule without one
    citations: list[Citation]
    subgraph: dict[str, Any]
    trace: Trace = field(repr=False)
    threshold: float = 0.0  # the perplexity under which an answer counts as sure
    chain: list[dict[str, Any]] = field(default_factory=list)  # a planned question's hops (empty: read as one)
    confidence: float | None = None  # 1 - P(wrong) from the corpus's fitted model; None where none was fitted
    queued: list[str] = field(default_factory=list)  # enrichment jobs queued to run after this answer
    quote: Quote | None = None  # the line of a cited passage that states the answer (evidence/quote.py)
    spent: str | None = None  # the reader budget ran out first: this is the best read so far, and why

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: an unreadable answer's infinite perplexity is null."""
        return {
            "question": self.question,
            "answer": self.answer,
            "perplexity": self.perplexity if math.isfinite(self.perplexity) else None,
            "sure": self.sure,
            "threshold": self.threshold,
            "confidence": self.confidence,
            "citations": [c.to_dict() for c in self.citations],
            "subgraph": self.subgraph,
            "chain": self.chain,
            "queued": self.queued,
            "quote": self.quote.to_dict() if self.quote else None,
            "spent": self.spent,
            "trace": self.trace.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        """An answer a server sent back (`enrich-rag query` against a running server)."""
        perplexity = data.get("perplexity")
        return cls(
            question=data["question"],
            answer=data["answer"],
            perplexity=math.inf if perplexity is None else float(perplexity),
            sure=bool(data["sure"]),
            citations=[citation_from_dict(c) for c in data.get("citations", [])],
            subgraph=data.get("subgraph", {}),
            trace=Trace.from_dict(data.get("trace", {"question": data["question"]})),
            threshold=float(data.get("threshold", 0.0)),
            chain=list(data.get("chain", [])),
            confidence=data.get("confidence"),
            queued=list(data.get("queued", [])),
            quote=Quote(**data["quote"]) if data.get("quote") else None,
            spent=data.get("spent"),
        )
