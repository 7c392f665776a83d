"""The OpenAI chat-completions dialect, so chat front-ends (Open WebUI and the like) and any `openai`
client talk to EnrichRAG as to a model: `/v1/models` lists one model, `/v1/chat/completions` answers
the last user message with its citations appended, streamed or not.

The conversation the client sends back is the multi-turn history: the previous user message and the
assistant's answer to it resolve a follow-up ("where was he born?") as `/api/query` does. Steps stream
as `reasoning_content` deltas (front-ends fold them away as the model's thinking), the answer as
`content`. The API key is the server's write token: with it a question may enrich, without it it reads.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from enrich_rag.agent.stream import ANSWER, ERROR, STEP
from enrich_rag.serve.conversation import Turn

MODEL = "enrich-rag"
SOURCES_HEADER = "\n\nSources:"
QUOTE_PREFIX = "\n\n> "  # the line that states the answer, between the answer and its sources
SNIPPET_CHARS = 160


class ChatMessage(BaseModel):
    # Names, tool calls ... are kept by clients; only role and text are read.
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "user", "assistant", "tool", "developer"] = Field(
        description="who wrote the message; the last must be the user's"
    )
    content: str | list[dict[str, Any]] | None = Field(None, description="its text, or parts of which only the text parts are read")

    def text(self) -> str:
        """Plain text, or the text parts of a multi-part message (images are not read)."""
        if isinstance(self.content, list):
            return " ".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, top_p, max_tokens ...: the reader is greedy and short
    model: str = Field(MODEL, description="`enrich-rag`, or `enrich-rag/NAME` for a workspace (GET /v1/models lists them)")
    messages: list[ChatMessage] = Field(min_length=1, max_length=200, description="the conversation; the last is the question")
    stream: bool = Field(False, description="completion chunks as server-sent events, the loop's steps as `reasoning_content`")


def chat_error(message: str, status: int) -> tuple[dict[str, Any], int]:
    kind = {401: "authentication_error", 404: "not_found_error"}.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "code": None}}, status


def checked(request: ChatRequest, models: tuple[str, ...] = (MODEL,)) -> str | None:
    """What is wrong with the request, in one line (None: it can be answered)."""
    if request.model not in models:
        return f"model '{request.model[:80]}' is not served here; GET /v1/models lists {', '.join(repr(m) for m in models)}"
    if request.messages[-1].role != "user" or not request.messages[-1].text().strip():
        return "the last message must be the user's question, as text"
    return None


def turn_key(question: str, answer: str) -> str:
    """A turn as the client sends it back (its question and the answer's text), the key the server's
    record of that turn (its entities) is kept under."""
    return hashlib.sha1(f"{question}\x00{answer}".encode()).hexdigest()[:16]


def answer_text(content: str) -> str:
    """An assistant message this endpoint wrote, without the line and the sources appended to it."""
    for appended in (QUOTE_PREFIX, SOURCES_HEADER):
        content = content.split(appended, 1)[0]
    return content.strip()


def previous_turn(messages: list[ChatMessage], known: Any) -> tuple[str, Turn | None]:
    """The question, and the turn before it (what `known(key)` recorded of it, else what the history says)."""
    question = messages[-1].text().strip()
    earlier = [m for m in messages[:-1] if m.role in ("user", "assistant")]
    if len(earlier) < 2 or earlier[-1].role != "assistant" or earlier[-2].role != "user":
        return question, None
    asked, said = earlier[-2].text().strip(), answer_text(earlier[-1].text())
    return question, known(turn_key(asked, said)) or Turn(asked, said, ())


def reply_text(answer: dict[str, Any]) -> str:
    """The answer, the line that states it, and its numbered sources: the assistant message's content."""
    return (answer["answer"] or "(no answer)") + stated(answer.get("quote")) + sources(answer["citations"])


def stated(line: dict[str, Any] | None) -> str:
    """The line of the documents that states the answer, quoted under it (nothing when none does)."""
    return f"{QUOTE_PREFIX}{line['text']} ({line['doc_id']})" if line else ""


def sources(citations: list[dict[str, Any]]) -> str:
    """The citations as numbered lines, appended to the answer."""
    if not citations:
        return ""
    lines = []
    for i, c in enumerate(citations, 1):
        snippet = " ".join(c["evidence"].split())
        snippet = snippet if len(snippet) <= SNIPPET_CHARS else snippet[:SNIPPET_CHARS] + "…"
        lines.append(f"[{i}] {c.get('title') or c.get('fact')} ({c['chunk_id']}): {snippet}")
    return SOURCES_HEADER + "\n" + "\n".join(lines)


def _envelope(kind: str, completion_id: str, created: int, model: str) -> dict[str, Any]:
    return {"id": completion_id, "object": kind, "created": created, "model": model}


def completion(answer: dict[str, Any], model: str = MODEL) -> dict[str, Any]:
    """A whole answer as a `chat.completion`; the EnrichRAG answer itself rides along under `enrich_rag`."""
    content = reply_text(answer)
    return _envelope("chat.completion", f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), model=model) | {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},  # no tokens billed: a local reader
        "enrich_rag": answer,
    }


class ChunkWriter:
    """A question's events (`agent/stream.py`) as `chat.completion.chunk`s, one completion id for all."""

    def __init__(self, model: str = MODEL) -> None:
        self.envelope = _envelope("chat.completion.chunk", f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), model=model)
        self.started = False

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return self.envelope | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def chunks(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        if event["event"] == ERROR:  # the `openai` client raises an APIError on it
            return [chat_error(event["error"], 500)[0]]
        out = [] if self.started else [self._chunk({"role": "assistant", "content": ""})]
        self.started = True
        if event["event"] == STEP:
            summary = f" {event['summary']}" if event["summary"] else ""
            out.append(self._chunk({"reasoning_content": f"{event['tool']} ({event['seconds']:.2f} s){summary}\n"}))
        elif event["event"] == ANSWER:
            answer = event["answer"]
            content = reply_text(answer)
            out += [self._chunk({"content": content}), self._chunk({}, "stop")]
        return out
