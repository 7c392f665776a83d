"""The OpenAI-compatible backend against a small completions server started in the test on 127.0.0.1.

No llama.cpp server can be started here without compiling it, so this server speaks the same
`/v1/completions` API (text, logprobs.tokens/token_logprobs/text_offset, echo) over fixed
word-level "tokens". It is a stand-in for the network peer only; the client code is the real one.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from enrich_rag.llm.base import LLMError, perplexity
from enrich_rag.llm.openai_backend import OpenAICompatibleLLM


class _Server:
    def __init__(self, failures: int = 0, logprobs: bool = True, delay_s: float = 0.0, chat_only: bool = False):
        self.failures, self.logprobs, self.delay_s, self.requests = failures, logprobs, delay_s, []
        self.chat_only = chat_only
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body))
                if outer.failures > 0:
                    outer.failures -= 1
                    self.send_response(503)
                    self.end_headers()
                    return
                if outer.delay_s:
                    threading.Event().wait(outer.delay_s)
                if self.path.endswith("/chat/completions"):
                    choice = outer.chat(body)
                elif outer.chat_only:
                    self.send_response(404)
                    self.end_headers()
                    return
                else:
                    choice = outer.complete(body)
                payload = json.dumps({"choices": [choice]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @staticmethod
    def _tokens(text: str) -> tuple[list[str], list[int]]:
        tokens, offsets, pos = [], [], 0
        for word in text.split(" "):
            piece = word if pos == 0 else " " + word
            tokens.append(piece)
            offsets.append(pos)
            pos += len(piece)
        return tokens, offsets

    def complete(self, body: dict) -> dict:
        prompt = body["prompt"]
        generated = " London\nQuestion:"
        if body.get("echo"):
            tokens, offsets = self._tokens(prompt)
            # " London" is likely after "born in", anything else is not.
            lps = [None] + [-0.05 if t == " London" else -4.0 for t in tokens[1:]]
            text = prompt + " ."
        else:
            tokens, offsets, lps, text = [" London"], [len(prompt)], [-0.1], generated
        logprobs = {"tokens": tokens, "token_logprobs": lps, "text_offset": offsets} if self.logprobs else None
        return {"text": text, "logprobs": logprobs, "index": 0}

    def chat(self, body: dict) -> dict:
        """Chat API with token log-probs: the reply to a question is "London" (two tokens)."""
        tokens = [("Lon", -0.2), ("don", -0.1)][: body["max_tokens"]]
        top = [{"token": "Yes", "logprob": -0.3}, {"token": "No", "logprob": -1.5}, {"token": "Lon", "logprob": -0.2}]
        content = [{"token": t, "logprob": lp, "top_logprobs": top[: body.get("top_logprobs", 0)]} for t, lp in tokens]
        return {
            "message": {"role": "assistant", "content": "".join(t for t, _ in tokens)},
            "logprobs": {"content": content} if self.logprobs else None,
            "index": 0,
        }

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    srv = _Server()
    yield srv
    srv.close()


def test_generate_stops_at_newline_and_returns_logprobs(server):
    llm = OpenAICompatibleLLM(server.url, "gemma", timeout_s=5)
    gen = llm.generate("Q: where?\nA:", max_new_tokens=8)
    assert gen.text == "London" and gen.token_logprobs == [-0.1]
    path, body = server.requests[-1]
    assert path == "/v1/completions" and body["temperature"] == 0 and body["stop"] == ["\n"]


def test_score_uses_echoed_logprobs_of_the_continuation_only(server):
    llm = OpenAICompatibleLLM(server.url, "gemma", timeout_s=5)
    right = llm.score("He was born in", " London")
    wrong = llm.score("He was born in", " Paris")
    assert right == [-0.05] and perplexity(right) < perplexity(wrong)
    assert server.requests[-1][1]["echo"] is True


def test_server_without_logprobs_is_a_clear_error():
    srv = _Server(logprobs=False)
    try:
        with pytest.raises(LLMError, match="returned no echoed log-probs"):
            OpenAICompatibleLLM(srv.url, "m", timeout_s=5).score("a", " b")
    finally:
        srv.close()


def test_retries_with_backoff_on_503_then_succeeds():
    srv = _Server(failures=2)
    try:
        llm = OpenAICompatibleLLM(srv.url, "m", timeout_s=5, retries=2, backoff_s=0.01)
        assert llm.generate("x").text == "London"
        assert len(srv.requests) == 3
    finally:
        srv.close()


def test_down_or_slow_server_fails_with_one_line():
    slow = _Server(delay_s=1.0)
    try:
        with pytest.raises(LLMError, match="failed after 2 attempt"):
            OpenAICompatibleLLM(slow.url, "m", timeout_s=0.2, retries=1, backoff_s=0.01).generate("x")
    finally:
        slow.close()
    with pytest.raises(LLMError, match=r"127\.0\.0\.1:9/v1/completions failed after 1 attempt"):
        OpenAICompatibleLLM("http://127.0.0.1:9/v1", "m", timeout_s=1, retries=0).generate("x")


def test_chat_only_server_gives_answers_perplexity_and_yes_no_scores():
    srv = _Server(chat_only=True)
    try:
        llm = OpenAICompatibleLLM(srv.url, "qwen", timeout_s=5, endpoint="chat")
        gen = llm.generate("Where was he born?", max_new_tokens=8)
        assert gen.text == "London" and gen.token_logprobs == [-0.2, -0.1]
        path, body = srv.requests[-1]
        assert path == "/v1/chat/completions" and body["logprobs"] is True and "echo" not in body
        assert body["messages"] == [{"role": "user", "content": "Where was he born?"}]
        assert llm.score("Does it help?", " Yes") == [-0.3] and llm.score("Does it help?", " No") == [-1.5]
        assert llm.score("Does it help?", " Maybe") == [-30.0]  # not among the top alternatives
        with pytest.raises(LLMError, match="HTTP 404"):
            OpenAICompatibleLLM(srv.url, "qwen", timeout_s=5, retries=0).generate("x")  # completions: not offered
    finally:
        srv.close()


def test_chat_server_without_logprobs_is_a_clear_error():
    srv = _Server(chat_only=True, logprobs=False)
    try:
        with pytest.raises(LLMError, match="returned no log-probs on /chat/completions"):
            OpenAICompatibleLLM(srv.url, "m", timeout_s=5, endpoint="chat").generate("a")
    finally:
        srv.close()
