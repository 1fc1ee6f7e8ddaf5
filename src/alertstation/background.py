"""The worker process (``alertstation worker``): periodic jobs, the EAS airing loop and the
audio monitor, run only by the leader.

``run``'s supervisor starts it as a program of its own (``python -m alertstation.background``),
so the process that stays up holds what the jobs need, not the command line's argument parsers
and command modules; ``alertstation worker`` runs the same :func:`run_worker_process`.
"""

from __future__ import annotations

import signal
import sys
import threading
import time

from alertstation.audio.monitor import start_monitor
from alertstation.commands import (
    REFUSALS,
    failure_status,
    load_settings,
    require_current_schema,
)
from alertstation.eas.airing.onair import start_airing
from alertstation.operations.jobs import STATION_JOBS
from alertstation.station import build_station
from alertstation.worker.leader import LeaderLease, leader_lock_for
from alertstation.worker.runner import run_worker
from alertstation.worker.supervisor import die_with_parent
from alertstation.worker.upload_sweep import leftover_folders, sweep_stale_uploads


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def run_worker_process() -> int:
    """Check the schema, sweep stale uploads, then run the worker until SIGTERM or SIGINT."""
    die_with_parent()
    settings = load_settings()
    require_current_schema(settings)
    sweep_stale_uploads(leftover_folders(settings), time.time())
    stop = threading.Event()
    _stop_on_signals(stop)
    station = build_station(settings)
    lock = leader_lock_for(station.engine, settings.data_dir)
    lease = LeaderLease(lock)  # airing stops once the leader can no longer confirm its lock
    airing: list[threading.Thread] = []  # airing takes real time: its own thread, not a job

    def on_leader() -> None:
        airing.append(start_airing(station, stop, leading=lease.confirmed))
        airing.append(start_monitor(station, stop))  # every audio source in its own thread

    try:
        run_worker(station, stop, jobs=STATION_JOBS, lock=lock, lease=lease, on_leader=on_leader)
    finally:
        stop.set()  # also on lost leadership: the outputs stop and the item is marked failed
        for thread in airing:
            thread.join(timeout=10)
    return 0


def main() -> int:
    """Run as a program; a refused start prints its reason as ``alertstation worker`` does."""
    try:
        return run_worker_process()
    except REFUSALS as ex:
        return failure_status(ex)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
