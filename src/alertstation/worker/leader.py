"""Leader election for the worker: exactly one process runs periodic jobs.

PostgreSQL sites hold a session-level advisory lock on a dedicated connection, so workers on
several hosts agree on one leader. SQLite stations hold an exclusive file lock beside the
database. A worker that cannot take the lock waits, checking again every few seconds, and takes
over when the leader exits.

A leader confirms its lock every :data:`CONFIRM_SECONDS` in a thread of its own
(:class:`LeaderLease`). What must never run on two hosts at once (the airing loop) asks
:meth:`LeaderLease.confirmed` before each claim and while a message plays: once the lock has not
been confirmed for :data:`LEASE_SECONDS` (the leader's link is cut, its database connection
hangs), the message on the air is cut and nothing more is claimed. PostgreSQL frees the lock of a
silent client only after its TCP keepalives and user timeout gave up (about 20 s with
``deploy/postgresql/alertstation.conf``), so an old leader stops airing before a standby can lead.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from sqlalchemy import Connection, Engine, text

from alertstation.db.engine import begin_write
from alertstation.notifications import notify
from alertstation.notifications.events import WORKER_CHANGE

log = logging.getLogger("alertstation.worker")

# A fixed 63-bit key derived from the product name; any value works as long as all hosts agree.
ADVISORY_LOCK_KEY = int.from_bytes(b"alrtstn1", "big") & 0x7FFF_FFFF_FFFF_FFFF
#: How often the leader confirms that it still holds its lock.
CONFIRM_SECONDS = 2.0
#: How long a confirmation stays good: past it the leader no longer airs or claims anything. It
#: must stay well below the time PostgreSQL takes to drop a silent client (keepalives, user
#: timeout), which is when a standby may take the lock.
LEASE_SECONDS = 8.0


class LeaderLock(Protocol):
    """A lock that at most one worker holds at a time."""

    def try_acquire(self) -> bool: ...

    def still_held(self) -> bool: ...

    def release(self) -> None: ...


class FileLeaderLock:
    """Exclusive ``flock`` on a file in the data directory (one-box SQLite stations)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def still_held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def holder(self) -> str:
        """Return the pid written by the current holder, for log lines."""
        try:
            return self.path.read_text().strip() or "unknown"
        except OSError:
            return "unknown"


class AdvisoryLeaderLock:
    """PostgreSQL session advisory lock held on a connection kept open while leading."""

    def __init__(self, engine: Engine, key: int = ADVISORY_LOCK_KEY) -> None:
        self._engine = engine
        self._key = key
        self._conn: Connection | None = None

    def try_acquire(self) -> bool:
        conn = self._engine.connect()
        got = conn.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": self._key}).scalar()
        conn.commit()
        if not got:
            conn.close()
            return False
        self._conn = conn
        return True

    def still_held(self) -> bool:
        if self._conn is None:
            return False
        try:
            held = self._conn.execute(
                text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND pid = pg_backend_pid() AND objid = (:key & 4294967295)::oid "
                    "AND classid = ((:key >> 32) & 4294967295)::oid"
                ),
                {"key": self._key},
            ).scalar()
            self._conn.commit()
        except Exception:  # the connection died: the server released the lock with it
            log.exception("lost the leader connection")
            return False
        return bool(held)

    def release(self) -> None:
        if self._conn is not None:
            try:
                self._conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": self._key})
                self._conn.commit()
            except Exception:  # a dead connection: the server releases the lock with it
                log.warning("the leader lock could not be released; its connection is gone")
            finally:
                self._conn.close()
                self._conn = None

    def holder(self) -> str:
        """Return the backend pid of the current holder, for log lines."""
        with self._engine.connect() as conn:
            pid = conn.execute(
                text(
                    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND objid = (:key & 4294967295)::oid "
                    "AND classid = ((:key >> 32) & 4294967295)::oid"
                ),
                {"key": self._key},
            ).scalar()
        return f"postgres backend {pid}" if pid else "unknown"


class LeaderLease:
    """The leader's proof that it still holds its lock, renewed in a thread of its own.

    :meth:`confirmed` costs no I/O: it tells whether the last successful confirmation is younger
    than ``valid_for`` seconds and no confirmation found the lock gone. Only the lease thread
    uses the lock's connection once :meth:`start` ran.
    """

    def __init__(
        self,
        lock: LeaderLock,
        *,
        interval: float = CONFIRM_SECONDS,
        valid_for: float = LEASE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = lock
        self._interval = interval
        self._valid_for = valid_for
        self._monotonic = monotonic
        self._confirmed_at = float("-inf")  # not confirmed before the worker leads
        self._lost = False
        self._thread: threading.Thread | None = None

    def renew(self) -> bool:
        """Confirm the lock once (blocks as long as the query does); False once it is lost."""
        if self._lost:
            return False
        asked = self._monotonic()
        if self._lock.still_held():
            self._confirmed_at = max(self._confirmed_at, asked)
            return True
        self._lost = True
        return False

    def confirmed(self) -> bool:
        """Return True while the lock was confirmed within the lease and never found lost."""
        return not self._lost and self._monotonic() - self._confirmed_at <= self._valid_for

    @property
    def lost(self) -> bool:
        """Return True once a confirmation found the lock gone (the connection died)."""
        return self._lost

    def start(self, stop: threading.Event) -> None:
        """Count the lock just taken as confirmed, then renew in a daemon thread every
        ``interval`` seconds until ``stop`` or the loss."""
        self._confirmed_at = self._monotonic()

        def renew_until_stopped() -> None:
            while not stop.wait(self._interval):
                if not self.renew():
                    log.critical("the leader lock is lost: this worker no longer leads")
                    return

        self._thread = threading.Thread(
            target=renew_until_stopped, name="leader-lease", daemon=True
        )
        self._thread.start()

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the lease thread (after ``stop`` was set)."""
        if self._thread is not None:
            self._thread.join(timeout)


def leader_lock_for(engine: Engine, data_dir: Path) -> FileLeaderLock | AdvisoryLeaderLock:
    """Pick the lock that fits the database backend."""
    if engine.dialect.name == "postgresql":
        return AdvisoryLeaderLock(engine)
    return FileLeaderLock(data_dir / "worker.lock")


def wait_for_leadership(
    lock: FileLeaderLock | AdvisoryLeaderLock, stop: threading.Event, poll_seconds: float = 2.0
) -> bool:
    """Block until ``lock`` is taken (True) or ``stop`` is set (False)."""
    announced = False
    while not stop.is_set():
        if lock.try_acquire():
            log.info("worker is the leader", extra={"pid": os.getpid()})
            return True
        if not announced:
            log.info("another worker leads; waiting", extra={"leader": lock.holder()})
            announced = True
        stop.wait(poll_seconds)
    return False


def announce_leadership(engine: Engine, now: datetime) -> None:
    """Write the ``worker_change`` notification of this process becoming the leader.

    A failure is logged, never raised: telling the channels must not stop the worker leading.
    """
    host, pid = socket.gethostname(), os.getpid()
    try:
        with begin_write(engine) as conn:
            notify(
                conn,
                WORKER_CHANGE,
                subject=f"Worker leader: {host} (pid {pid})",
                body=f"The worker on {host} (pid {pid}) became the leader at "
                f"{now:%Y-%m-%d %H:%M:%S} UTC: it runs the station's jobs and airs messages.",
                now=now,
            )
    except Exception:
        log.exception("the leader change could not be written as a notification")
