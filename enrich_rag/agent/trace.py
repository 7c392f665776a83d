"""A record of every step of one question: tool, inputs, outputs, perplexity, time, partitions."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator


@dataclass
class Step:
    tool: str
    inputs: dict[str, Any]
    outputs: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class Trace:
    question: str
    steps: list[Step] = field(default_factory=list)
    partitions_written: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @contextmanager
    def step(self, tool: str, **inputs: Any) -> Iterator[Step]:
        step = Step(tool, inputs)
        start = time.perf_counter()
        try:
            yield step
        finally:
            step.seconds = round(time.perf_counter() - start, 4)
            self.steps.append(step)

    def tools(self) -> list[str]:
        return [s.tool for s in self.steps]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def summary_rows(self) -> list[tuple[str, str, str]]:
        rows = []
        for s in self.steps:
            detail = ", ".join(f"{k}={v}" for k, v in s.outputs.items() if k in _SUMMARY_KEYS)
            rows.append((s.tool, f"{s.seconds:.2f}s", detail))
        return rows


_SUMMARY_KEYS = {"entry_points", "facts", "answer", "perplexity", "decision", "reason", "expansion_query",
                 "new_chunks", "partition", "indexed", "dvc", "pagerank_graph"}
