"""The worker's main loop: lead, then run each job when it falls due."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from alertstation.context import Station
from alertstation.worker.jobs import JOBS, Job
from alertstation.worker.leader import (
    AdvisoryLeaderLock,
    FileLeaderLock,
    LeaderLease,
    announce_leadership,
    leader_lock_for,
    wait_for_leadership,
)

log = logging.getLogger("alertstation.worker")


def run_due_jobs(
    station: Station, jobs: Sequence[Job], next_run: dict[str, float], now: float
) -> None:
    """Run every job whose time has come; one failing job never stops the others."""
    for job in jobs:
        if now < next_run.get(job.name, 0.0):
            continue
        started = time.monotonic()
        try:
            job.run(station)
        except Exception:
            log.exception("job failed", extra={"job": job.name})
        else:
            log.debug(
                "job done",
                extra={"job": job.name, "duration_ms": round((time.monotonic() - started) * 1000)},
            )
        next_run[job.name] = now + job.interval


def run_worker(
    station: Station,
    stop: threading.Event,
    *,
    jobs: Sequence[Job] = JOBS,
    lock: FileLeaderLock | AdvisoryLeaderLock | None = None,
    lease: LeaderLease | None = None,
    on_leader: Callable[[], None] | None = None,
    tick_seconds: float = 1.0,
) -> None:
    """Wait to lead, then run ``jobs`` until ``stop`` is set or leadership is lost.

    While leading, ``lease`` (made from ``lock`` when not given) confirms the lock in a thread of
    its own; once it can no longer confirm it, the worker stops with exit status 1 so its
    supervisor starts it again as a standby.
    """
    lock = lock or leader_lock_for(station.engine, station.settings.data_dir)
    lease = lease or LeaderLease(lock)
    if not wait_for_leadership(lock, stop):
        return
    lease.start(stop)
    announce_leadership(station.engine, station.clock())
    if on_leader:
        on_leader()
    next_run: dict[str, float] = {}
    try:
        while not stop.is_set():
            run_due_jobs(station, jobs, next_run, time.monotonic())
            if not lease.confirmed():
                log.critical(
                    "leadership cannot be confirmed; stopping so a supervisor can restart "
                    "the worker as a standby"
                )
                raise SystemExit(1)
            stop.wait(tick_seconds)
    finally:
        stop.set()  # ends the lease thread (and the airing loop) before the lock is released
        lease.join(timeout=5)
        lock.release()
        log.info("worker stopped")
