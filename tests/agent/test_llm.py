"""The embedded Gemma 3 270M through transformers (real inference), and the perplexity signal."""

import math

from enrich_rag.llm.base import perplexity
from enrich_rag.llm.prompts import answer_prompt


def test_perplexity_is_lower_for_the_correct_continuation(embedded_llm):
    prompt = answer_prompt("Where was Christopher Nolan born?", ["Christopher Nolan was born in London in 1970."])
    right = perplexity(embedded_llm.score(prompt, " London"))
    wrong = perplexity(embedded_llm.score(prompt, " Tokyo"))
    assert right < 3.0 < wrong


def test_context_lowers_answer_perplexity(embedded_llm):
    question = "Where was Christopher Nolan born?"
    with_context = perplexity(embedded_llm.score(answer_prompt(question, ["Christopher Nolan was born in London."]), " London"))
    without = perplexity(embedded_llm.score(answer_prompt(question, []), " London"))
    assert with_context < without


def test_greedy_generation_is_deterministic_and_logprobs_match_score(embedded_llm):
    prompt = answer_prompt("Who directed Inception?", ["Inception is a 2010 film directed by Christopher Nolan."])
    first = embedded_llm.generate(prompt, max_new_tokens=8)
    second = embedded_llm.generate(prompt, max_new_tokens=8)
    # The second call reuses the shared prompt prefix's KV cache: same text, same log-probs up to float noise.
    assert first.text == second.text
    assert all(abs(a - b) < 1e-4 for a, b in zip(first.token_logprobs, second.token_logprobs))
    assert "Nolan" in first.text
    scored = embedded_llm.score(prompt, " " + first.text)
    assert abs(perplexity(scored) - first.perplexity) < 0.05 * first.perplexity + 0.05


def test_a_reply_that_repeats_a_worked_example_is_asked_again_without_the_examples():
    """Scripted reader (tests/scripted_llm.py): the guard is about which prompt is sent again, not the model."""
    from enrich_rag.agent.sufficiency import check_sufficiency
    from enrich_rag.llm.prompts import ANSWER_SHOTS
    from enrich_rag.llm.reader import copies_a_shot, read
    from enrich_rag.storage.passages import Passage
    from tests.scripted_llm import ScriptedLLM

    lines = ["Ed Bye: Ed Bye is a British television producer, married to Ruby Wax."]
    assert copies_a_shot(" tasmania ", lines) and not copies_a_shot("Tasmania", ["Hobart is in Tasmania."])
    assert not copies_a_shot("Ruby Wax", lines)

    llm = ScriptedLLM([("Tasmania", 1.3), ("Berkeley", 1.8)])
    assert read(llm, "Where did Ed Bye's wife graduate from?", lines, 16).text == "Berkeley"
    first, again = llm.prompts
    assert ANSWER_SHOTS[1][0].split("\n")[0] in first and "Velmar" not in again and lines[0] in again

    asked: list[int] = []  # where the answer's seconds cannot hold a second call, the copied example is no answer
    llm = ScriptedLLM([("Tasmania", 1.3), ("Berkeley", 1.8)])
    reply = read(llm, "Where did Ed Bye's wife graduate from?", lines, 16, again_fits=lambda chars: asked.append(chars) or False)
    assert reply.text == "" and reply.perplexity == math.inf and len(llm.prompts) == 1
    assert asked and lines[0] in llm.prompts[0] and asked[0] > len(lines[0])

    llm = ScriptedLLM([("Ruby Wax", 1.2)])  # an answer from its facts is read once
    assert read(llm, "Who is Ed Bye's wife?", lines, 16).text == "Ruby Wax" and len(llm.prompts) == 1

    llm = ScriptedLLM([("Tasmania", 1.3)])  # asked again, still the example: no confidence in it
    passage = Passage("bye::c0", "bye", "Ed Bye", lines[0].split(": ", 1)[1])
    assert check_sufficiency(llm, "Where did Ed Bye's wife graduate from?", [passage], 16).perplexity == math.inf
