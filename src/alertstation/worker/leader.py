"""Leader election for the worker: exactly one process runs periodic jobs.

PostgreSQL sites hold a session-level advisory lock on a dedicated connection, so workers on
several hosts agree on one leader. SQLite stations hold an exclusive file lock beside the
database. A worker that cannot take the lock waits, checking again every few seconds, and takes
over when the leader exits.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import threading
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
