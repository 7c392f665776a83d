"""Questions first: an enrichment round's reader calls wait while a question waits or runs. What is tested
is the order in which threads reach the reader, so the reader here is a recorder standing in for the
model (the API tests run the real one behind the same wrapper)."""

import threading
import time

from enrich_rag.llm.priority import QuestionsFirst, in_background


class Recorder:
    name = "recorder"

    def __init__(self):
        self.calls = []

    def generate(self, prompt, max_new_tokens=24, stop=("\n",)):
        self.calls.append(prompt)
        return prompt

    def score(self, prompt, continuation):
        self.calls.append(prompt)
        return [0.0]


def test_a_rounds_reader_calls_wait_while_a_question_runs_and_a_questions_never_wait():
    question_running = threading.Event()
    question_running.set()
    reader = QuestionsFirst(Recorder(), idle=lambda: not question_running.is_set(), poll_s=0.01)

    def round_of_enrichment():
        with in_background():
            reader.generate("round: extract facts")
            reader.score("round: score", "x")

    worker = threading.Thread(target=round_of_enrichment)
    worker.start()
    time.sleep(0.1)
    assert reader.llm.calls == []  # the round waits while the question runs ...
    assert reader.generate("question: read") == "question: read"  # ... and the question's own call does not wait
    question_running.clear()
    worker.join(timeout=5)
    assert reader.llm.calls == ["question: read", "round: extract facts", "round: score"]
    assert reader.name == "recorder" and not hasattr(reader, "generate_json")  # the rest passes through as it is


def test_outside_a_background_block_the_same_thread_is_not_held():
    reader = QuestionsFirst(Recorder(), idle=lambda: False, poll_s=0.01)
    with in_background():
        pass
    assert reader.generate("after the round") == "after the round"
