"""The checks a written question must pass, cheapest first. Each rejection is counted in the report,
so a user sees what their corpus and model make hard.

A question is kept when it is well formed, its reference answer is in its gold passages, it is no
near-duplicate of a kept one, the reader answers it from the gold passages (answerable) and, for a
bridge question, from neither passage alone (needs both), and does not answer it with no
passages (not trivia it already knows).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from enrich_rag.eval.metrics import contains_answer, exact_match, normalize_answer, token_f1
from enrich_rag.llm.base import LLM
from enrich_rag.llm.prompts import answer_prompt
from enrich_rag.text import YES_NO, content_words

WELL_FORMED, ANSWER_IN_GOLD, NOT_DUPLICATE = "well_formed", "answer_in_gold", "not_duplicate"
ANSWERABLE, NOT_TRIVIA, NEEDS_BOTH = "answerable", "not_trivia", "needs_both"
FILTERS = (WELL_FORMED, ANSWER_IN_GOLD, NOT_DUPLICATE, ANSWERABLE, NEEDS_BOTH, NOT_TRIVIA)
MATCH_F1 = 0.6  # token F1 at which a reader's answer counts as the reference (beside EM and containment)
QUESTION_WORDS = (3, 40)
KNOWS_P = 0.9  # first-token probability above which a right two-way answer with no passages is knowledge, not a guess

Reader = Callable[[str, list[str]], str]  # (question, passages) -> answer


def answers_match(prediction: str, answer: str) -> bool:
    """Lenient on purpose: a filter that drops a question for being answered must not miss an answer
    phrased a little differently ("the 1931 novel" for "1931")."""
    golds = [answer]
    return bool(exact_match(prediction, golds) or contains_answer(prediction, golds) or token_f1(prediction, golds) >= MATCH_F1)


def well_formed(question: str, answer: str, entities: tuple[str, str] = ("", ""), bridge: str = "") -> bool:
    """A question of sane length that does not give its answer away (a comparison names both entities
    and is answered by one of them, or yes/no) and, for a bridge question, does not name the bridge."""
    words = len(question.split())
    if not question.endswith("?") or not QUESTION_WORDS[0] <= words <= QUESTION_WORDS[1] or not normalize_answer(answer):
        return False
    named = f" {normalize_answer(question)} "
    if any(entities):  # a comparison names both sides ("Is X a film?" compares nothing)
        return normalize_answer(answer) in {*YES_NO, *(normalize_answer(e) for e in entities)} and all(_names(named, e) for e in entities)
    return all(f" {normalize_answer(name)} " not in named for name in (answer, bridge) if normalize_answer(name))


def _names(question: str, entity: str) -> bool:
    """The entity, or its name without a parenthesised qualifier ("Farewell (1983 film)" -> "Farewell")."""
    forms = {normalize_answer(entity), normalize_answer(entity.split(" (")[0])}
    return any(form and f" {form} " in question for form in forms)


def answer_in_gold(answer: str, passages: list[str]) -> bool:
    """yes/no is entailed by the facts, not quoted: the reader checks it (`answerable`)."""
    if normalize_answer(answer) in YES_NO:
        return True
    return normalize_answer(answer) in normalize_answer(" ".join(passages))


def is_duplicate(question: str, kept: list[set[str]], threshold: float) -> bool:
    words = content_words(question)
    return any(len(words & other) / max(1, len(words | other)) >= threshold for other in kept)


def answerable(read: Reader, question: str, answer: str, passages: list[str]) -> bool:
    return answers_match(read(question, passages), answer)


def not_trivia(llm: LLM, question: str, answer: str, max_new_tokens: int, binary: bool = False) -> bool:
    """The model alone does not know it. For a two-way question (which of two, yes or no) a right
    answer is a coin toss half the time, so there only a confident one counts as knowing."""
    generation = llm.generate(answer_prompt(question, []), max_new_tokens=max_new_tokens)
    if not answers_match(generation.text.strip(), answer):
        return True
    return binary and (not generation.token_logprobs or math.exp(generation.token_logprobs[0]) < KNOWS_P)


def needs_both(read: Reader, question: str, answer: str, passages: list[str], distractors: Sequence[str] = ()) -> bool:
    """Neither passage alone answers it. A lone passage that holds the answer names the only
    candidate, and a reader takes it without the first hop; so each passage is read among
    distractors (passages saying the same of other entities), in the middle, where a reader's
    leaning to the first or last passage does not help it. Only a passage that itself says which
    entity is meant (a shortcut) still answers."""
    head, tail = list(distractors[:1]), list(distractors[1:])
    return not any(answers_match(read(question, [*head, p, *tail]), answer) for p in passages)
