"""The cyclic collector paused over bulk work: off inside, as it was after, shared by threads."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from alertstation import collector


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    gc.enable() if was else gc.disable()


def test_off_inside_and_back_on_after() -> None:
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer batch still runs
    assert gc.isenabled()


def test_back_on_after_an_error() -> None:
    with pytest.raises(RuntimeError), collector.paused():
        raise RuntimeError("batch failed")
    assert gc.isenabled()


def test_a_collector_switched_off_beforehand_stays_off() -> None:
    gc.disable()
    with collector.paused():
        pass
    assert not gc.isenabled()


def test_overlapping_batches_on_threads_resume_only_when_the_last_ends() -> None:
    first_in, second_in, first_done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with collector.paused():
            first_in.set()
            second_in.wait(30)
        seen["after_first"] = gc.isenabled()
        first_done.set()

    def second() -> None:
        first_in.wait(30)
        with collector.paused():
            second_in.set()
            first_done.wait(30)
            seen["inside_second_after_first"] = gc.isenabled()
        seen["after_second"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert seen == {
        "after_first": False,
        "inside_second_after_first": False,
        "after_second": True,
    }


def test_batch_import_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    from alertstation.alerts.ingest import imports as bulk

    states: list[bool] = []
    real = bulk.parse_body

    def parse_body(*args: object, **kwargs: object) -> list:
        states.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(bulk, "parse_body", parse_body)
    # A body that is not CAP gives a problem and no alert, so no database is reached.
    results = bulk.import_bodies(None, [(b"not xml", "test")])  # type: ignore[arg-type]
    assert [type(r).__name__ for r in results] == ["ImportProblem"]
    assert states == [False]
    assert gc.isenabled()
