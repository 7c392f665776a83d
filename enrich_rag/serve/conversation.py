"""Multi-turn: resolve a follow-up ("and where was he born?") against the previous turn.

A pronoun is replaced by the entity it most likely points to: a person pronoun by the previous
answer when that is a name (else the previous question's first entity), "it"/"there" by the
previous question's first entity. Deliberately simple and visible: the API returns the resolved
question so the user sees what was asked.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass

_PERSON = {"he": "", "she": "", "him": "", "his": "'s", "her": "'s", "they": "", "them": "", "their": "'s"}
_THING = {"it": "", "its": "'s", "there": "", "that": ""}
_PRONOUN = re.compile(r"\b(" + "|".join([*_PERSON, *_THING]) + r")\b", re.IGNORECASE)
_LEADING = re.compile(r"^(and|so|also|then|ok(ay)?|what about)[,\s]+", re.IGNORECASE)
MAX_CONVERSATIONS = 256


@dataclass(frozen=True)
class Turn:
    question: str
    answer: str
    entities: tuple[str, ...]


def _is_name(text: str) -> bool:
    words = text.split()
    return 0 < len(words) <= 5 and all(w[:1].isupper() for w in words if w.isalpha() and len(w) > 3)


def resolve_followup(question: str, previous: Turn | None) -> str:
    if previous is None:
        return question
    match = _PRONOUN.search(question)
    if not match:
        return question
    pronoun = match.group(1).lower()
    if pronoun in _PERSON and _is_name(previous.answer):
        referent, suffix = previous.answer.strip(" ."), _PERSON[pronoun]
    elif previous.entities:
        referent, suffix = previous.entities[0], _PERSON.get(pronoun, _THING.get(pronoun, ""))
    else:
        return question
    resolved = question[: match.start()] + referent + suffix + question[match.end() :]
    resolved = _LEADING.sub("", resolved.strip())
    return resolved[:1].upper() + resolved[1:]


class Conversations:
    """Last turn per conversation id, bounded (oldest dropped), safe across request threads."""

    def __init__(self, limit: int = MAX_CONVERSATIONS):
        self._turns: OrderedDict[str, Turn] = OrderedDict()
        self._lock = threading.Lock()
        self._limit = limit

    def last(self, conversation_id: str | None) -> Turn | None:
        with self._lock:
            return self._turns.get(conversation_id) if conversation_id else None

    def record(self, conversation_id: str | None, turn: Turn) -> str:
        conversation_id = conversation_id or uuid.uuid4().hex[:12]
        with self._lock:
            self._turns[conversation_id] = turn
            self._turns.move_to_end(conversation_id)
            while len(self._turns) > self._limit:
                self._turns.popitem(last=False)
        return conversation_id
