"""RoundRunner: one round of a job at a time, in its own thread, failures logged and survived."""

from __future__ import annotations

import logging
import threading

import pytest

from alertstation.rounds import RoundRunner

LOG = logging.getLogger("tests.background")


def test_a_second_round_is_refused_while_the_first_runs() -> None:
    runner = RoundRunner("test-round", LOG, "the round failed")
    release, started, rounds = threading.Event(), threading.Event(), []

    def slow() -> None:
        rounds.append(threading.current_thread().name)
        started.set()
        release.wait(60)

    assert runner.start(slow) is True
    assert started.wait(60)
    assert runner.start(slow) is False  # no second round piles up behind a slow one
    release.set()
    runner.wait(60)
    assert rounds == ["test-round"]  # ran once, in a thread of its own, under the job's name
    assert runner.start(lambda: rounds.append("again")) is True  # free again once it ended
    runner.wait(60)
    assert rounds[-1] == "again"


def test_a_failed_round_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    runner = RoundRunner("test-round", LOG, "the round failed")

    def broken() -> None:
        raise RuntimeError("feed down")

    with caplog.at_level(logging.ERROR, logger="tests.background"):
        assert runner.start(broken) is True
        runner.wait(60)
    assert [r.getMessage() for r in caplog.records] == ["the round failed"]
    assert caplog.records[0].exc_info is not None  # the traceback is kept
    done = threading.Event()
    assert runner.start(done.set) is True
    runner.wait(60)
    assert done.is_set()


def test_waiting_before_any_round_returns_at_once() -> None:
    RoundRunner("test-round", LOG, "the round failed").wait(0)
