"""Only one worker leads; a second one waits and takes over when the first stops."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sqlalchemy import Engine

from alertstation.app import build_station
from alertstation.context import Station
from alertstation.worker.jobs import Job
from alertstation.worker.leader import LeaderLease, leader_lock_for
from alertstation.worker.runner import run_due_jobs, run_worker
from tests.support import make_settings


def _station(tmp_path: Path, engine: Engine) -> Station:
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    return build_station(settings, engine)


def test_second_lock_waits_until_first_is_released(tmp_path: Path, engine: Engine) -> None:
    first = leader_lock_for(engine, tmp_path)
    second = leader_lock_for(engine, tmp_path)
    assert first.try_acquire()
    try:
        assert first.still_held()
        assert not second.try_acquire()
        assert not second.try_acquire()
    finally:
        first.release()
    assert second.try_acquire()
    second.release()


def test_standby_worker_takes_over(tmp_path: Path, engine: Engine) -> None:
    station = _station(tmp_path, engine)
    leaders: list[str] = []
    runs: list[str] = []

    def start(name: str, stop: threading.Event) -> threading.Thread:
        job = Job("probe", 0.01, lambda s: runs.append(name))
        thread = threading.Thread(
            target=run_worker,
            args=(station, stop),
            kwargs={
                "jobs": (job,),
                "on_leader": lambda: leaders.append(name),
                "tick_seconds": 0.01,
                "lock": leader_lock_for(engine, tmp_path),
            },
            daemon=True,
        )
        thread.start()
        return thread

    stop_a, stop_b = threading.Event(), threading.Event()
    thread_a = start("a", stop_a)
    _wait_for(lambda: leaders == ["a"])
    thread_b = start("b", stop_b)
    time.sleep(0.3)
    assert leaders == ["a"], "the standby must not lead while the leader runs"
    assert "b" not in runs
    stop_a.set()
    thread_a.join(5)
    _wait_for(lambda: leaders == ["a", "b"], timeout=10)
    _wait_for(lambda: "b" in runs)
    stop_b.set()
    thread_b.join(5)
    assert not thread_a.is_alive() and not thread_b.is_alive()


def test_a_failing_job_does_not_stop_the_others(tmp_path: Path, engine: Engine) -> None:
    station = _station(tmp_path, engine)
    ran: list[str] = []

    def boom(s: Station) -> None:
        raise RuntimeError("job failure")

    jobs = (Job("boom", 5.0, boom), Job("ok", 5.0, lambda s: ran.append("ok")))
    next_run: dict[str, float] = {}
    run_due_jobs(station, jobs, next_run, now=10.0)
    assert ran == ["ok"]
    assert next_run == {"boom": 15.0, "ok": 15.0}
    run_due_jobs(station, jobs, next_run, now=12.0)
    assert ran == ["ok"], "not due yet"


def _wait_for(predicate, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition not reached in time")


class FakeLock:
    """A lock whose confirmation answers (and hangs) as the test says."""

    def __init__(self) -> None:
        self.held = True
        self.checks = 0

    def try_acquire(self) -> bool:
        return True

    def still_held(self) -> bool:
        self.checks += 1
        return self.held

    def release(self) -> None:
        self.held = False

    def holder(self) -> str:
        return "fake"


def test_the_lease_lapses_without_a_confirmation_and_ends_when_the_lock_is_lost() -> None:
    now = [100.0]
    lock = FakeLock()
    lease = LeaderLease(lock, valid_for=8.0, monotonic=lambda: now[0])
    assert not lease.confirmed(), "nothing is confirmed before the worker leads"
    assert lease.renew() and lease.confirmed()
    now[0] += 8.5  # no confirmation came back (the query hangs on a cut link)
    assert not lease.confirmed() and not lease.lost
    assert lease.renew()  # the link is back and the lock still ours
    assert lease.confirmed()
    lock.held = False  # the server dropped the connection, and the lock with it
    now[0] += 1.0
    assert not lease.renew()
    assert lease.lost and not lease.confirmed()
    lock.held = True
    assert not lease.renew() and not lease.confirmed(), "a lost lease never comes back"


def test_a_leader_whose_lease_lapses_stops(tmp_path: Path, engine: Engine) -> None:
    station = _station(tmp_path, engine)
    lock = FakeLock()
    lease = LeaderLease(lock, interval=0.01, valid_for=60.0)
    stop = threading.Event()
    runs: list[str] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            run_worker(
                station,
                stop,
                jobs=(Job("probe", 0.01, lambda s: runs.append("probe")),),
                lock=lock,  # type: ignore[arg-type]
                lease=lease,
                tick_seconds=0.01,
            )
        except SystemExit as ex:
            failure.append(ex)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    _wait_for(lambda: runs and lock.checks > 0)
    lock.held = False  # the next confirmation finds the lock gone
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert [ex.code for ex in failure] == [1]
    assert stop.is_set()
