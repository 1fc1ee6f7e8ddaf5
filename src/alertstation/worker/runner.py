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
    announce_leadership,
    leader_lock_for,
    wait_for_leadership,
)

log = logging.getLogger("alertstation.worker")

LEADERSHIP_CHECK_SECONDS = 15.0


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
    on_leader: Callable[[], None] | None = None,
    tick_seconds: float = 1.0,
) -> None:
    """Wait to lead, then run ``jobs`` until ``stop`` is set or leadership is lost."""
    lock = lock or leader_lock_for(station.engine, station.settings.data_dir)
    if not wait_for_leadership(lock, stop):
        return
    announce_leadership(station.engine, station.clock())
    if on_leader:
        on_leader()
    next_run: dict[str, float] = {}
    last_check = time.monotonic()
    try:
        while not stop.is_set():
            now = time.monotonic()
            run_due_jobs(station, jobs, next_run, now)
            if now - last_check >= LEADERSHIP_CHECK_SECONDS:
                last_check = now
                if not lock.still_held():
                    log.critical("leadership lost; stopping so a supervisor can restart the worker")
                    raise SystemExit(1)
            stop.wait(tick_seconds)
    finally:
        lock.release()
        log.info("worker stopped")
