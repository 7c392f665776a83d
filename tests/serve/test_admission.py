"""The reader's line on its own: plain threads and events, no model (the API tests use it with one)."""

import threading
import time

import pytest

from enrich_rag.serve.admission import Admission, Busy


def test_questions_run_in_arrival_order_one_at_a_time():
    admission, order, inside = Admission(1, 10, 1.0), [], []

    def job(n):
        def run(ticket):
            inside.append(n)
            assert len(inside) - len(order) == 1  # nobody else is running
            time.sleep(0.02)
            order.append(n)
            return n

        return run

    tickets = [admission.submit(job(n), 60) for n in range(5)]
    assert [t.future.result(timeout=10) for t in tickets] == list(range(5)) and order == list(range(5))
    assert all(t.timing()["waited_s"] >= 0 and t.timing()["ran_s"] > 0 for t in tickets)
    assert tickets[-1].timing()["waited_s"] > tickets[0].timing()["waited_s"]
    assert 0.01 < admission.health()["mean_question_s"] < 1.0  # measured, moving from the initial guess
    admission.close()


def test_an_expected_wait_past_the_limit_is_refused_before_queueing():
    admission, release = Admission(1, 100, 10.0), threading.Event()
    admission.submit(lambda t: release.wait(10), 60)
    for _ in range(4):
        admission.submit(lambda t: None, 60)
    # One running and four waiting at 10 s each, then 10 s of its own: 60 s > 45 s.
    with pytest.raises(Busy, match="expected wait 50 s") as busy:
        admission.submit(lambda t: None, 45)
    assert busy.value.retry_after_s == pytest.approx(15.0, abs=0.5)  # less the blocked question's few ms
    admission.submit(lambda t: None, 60)  # a limit that covers it still fits
    release.set()
    admission.close()


def test_a_question_given_up_while_waiting_never_runs():
    admission, release, ran = Admission(1, 10, 0.001), threading.Event(), []  # expected to be quick: admitted
    first = admission.submit(lambda t: release.wait(10), 60)
    gone = admission.submit(lambda t: ran.append("gone"), 60)
    late = admission.submit(lambda t: ran.append("late"), 0.05)
    kept = admission.submit(lambda t: ran.append("kept"), 60)
    gone.cancelled.set()  # its client disconnected
    time.sleep(0.1)  # `late` passed its limit in the line
    release.set()
    kept.future.result(timeout=10)
    assert ran == ["kept"] and gone.future.cancelled() and late.future.cancelled()
    assert admission.health()["dropped_before_running"] == 2 and first.future.done()
    admission.close()


def test_a_failing_question_does_not_stop_the_line():
    admission = Admission(1, 10, 1.0)

    def boom(ticket):
        raise ValueError("bad")

    failed, after = admission.submit(boom, 60), admission.submit(lambda t: "ok", 60)
    with pytest.raises(ValueError):
        failed.future.result(timeout=10)
    assert after.future.result(timeout=10) == "ok"
    admission.close()


def test_admission_plans_with_the_slow_questions_and_the_running_ones_time_left():
    """Times vary several-fold (with and without enrichment): planning with their mean admits questions
    that then wait out their limit, so admission plans with a high quantile."""
    admission = Admission(1, 10, 0.01)
    for seconds in (0.01,) * 7 + (0.3,) * 3:
        admission.submit(lambda t, s=seconds: time.sleep(s), 60).future.result(timeout=10)
    assert admission.plan_s() == pytest.approx(0.3, abs=0.1) and admission.health()["mean_question_s"] < 0.25
    release = threading.Event()
    admission.submit(lambda t: release.wait(10), 60)
    while not admission.health()["running"]:
        time.sleep(0.01)
    time.sleep(0.15)  # half of its planned time is spent: the wait counts only what is left
    assert 0.05 < admission.health()["expected_wait_s"] < 0.25
    with pytest.raises(Busy) as busy:
        admission.submit(lambda t: None, 0.3)  # what is left of the running one + one planned question > 0.3 s
    # Most questions take 0.01 s: the running one is likely done already, so a retry is due at once,
    # not when the slow plan says the line is surely free.
    assert busy.value.retry_after_s < 0.05
    release.set()
    admission.close()


def test_a_question_its_wait_left_too_little_time_is_refused_then_not_started():
    """Admission's plan is an estimate: here the question ahead overruns it, and the one behind reaches the
    front with less of its limit left than a question takes. It is refused with a retry time, not run
    into its limit; the next one in line runs."""
    admission, release, ran = Admission(1, 10, 0.2), threading.Event(), []  # planned: 0.2 s a question
    admission.submit(lambda t: release.wait(10), 60)
    late = admission.submit(lambda t: ran.append("late"), 0.5)  # admitted: 0.2 s of wait + 0.2 s to answer
    kept = admission.submit(lambda t: ran.append("kept"), 60)
    time.sleep(0.4)  # the question ahead takes 0.4 s and more: `late` has under 0.2 s left when it is next
    release.set()
    kept.future.result(timeout=10)
    with pytest.raises(Busy, match="of the limit is left") as busy:
        late.future.result(timeout=1)
    assert ran == ["kept"] and busy.value.retry_after_s >= 0
    assert admission.health()["refused_after_waiting"] == 1 and admission.health()["dropped_before_running"] == 0
    admission.close()


def test_with_a_bound_each_question_is_planned_at_it_so_what_is_let_in_keeps_its_limit():
    """Where answers have a bound (their budget and margin), admission plans each question at it, not at
    a guess or at recent times: slow times timed without the bound do not refuse a question that fits, and
    quick recent times do not let in one that could wait past its limit; the retry hint is still when
    the line is likely free (at typical times)."""
    from enrich_rag.agent.stream import Hooks

    admission, release = Admission(1, 10, 100.0, bound_s=0.4), threading.Event()
    try:
        assert admission.plan_s() == 0.4 and admission.health()["planned_question_s"] == 0.4
        admission.submit(lambda ticket: "answered", limit_s=0.5).future.result(timeout=5)  # 0 s wait + 0.4 s fits 0.5 s
        for _ in range(5):  # quick questions: the typical time falls, the plan stays at the bound
            admission.submit(lambda ticket: None, limit_s=60.0).future.result(timeout=5)
        admission.submit(lambda ticket: release.wait(10), limit_s=60.0)
        while not admission.health()["running"]:
            time.sleep(0.01)
        with pytest.raises(Busy, match="over the 0.7 s limit") as busy:  # up to 0.4 s left of the running one + 0.4 s
            admission.submit(lambda ticket: None, limit_s=0.7)
        assert busy.value.retry_after_s < 0.1  # the running one most likely ends at once
    finally:
        release.set()
        admission.close()
    hooks = Hooks().within(60.0, 40.0, 3.0)
    assert hooks.answer_by is not None and 56.0 < hooks.answer_by - time.monotonic() <= 57.0
