"""The embedded Gemma 3 270M through transformers (real inference), and the perplexity signal."""

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
