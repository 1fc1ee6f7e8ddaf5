"""Create database engines for the embedded SQLite file and for PostgreSQL."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from alertstation.db import staged_insert

SQLITE_BUSY_TIMEOUT_MS = 10_000
IMMEDIATE_OPTION = "alertstation_sqlite_immediate"
#: libpq settings of every PostgreSQL connection: a host whose link to the database is cut learns
#: it within seconds instead of TCP's 15 minutes. Keepalives probe an idle connection after 10 s,
#: every 3 s, 3 times; ``tcp_user_timeout`` (ms) drops one whose sent data stays unacknowledged;
#: ``connect_timeout`` bounds a new connection. The worker's leader lease (8 s) and the server's
#: own keepalives (deploy/postgresql/alertstation.conf) build on these (docs/deploy.md).
POSTGRESQL_CONNECT_ARGS: dict[str, int] = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 3,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
    "connect_timeout": 10,
}


def make_engine(url: str, **kwargs: Any) -> Engine:
    """Create an engine tuned for the station's two supported backends."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, **kwargs)
    if parsed.get_backend_name() == "postgresql":
        kwargs.setdefault("pool_pre_ping", True)
        kwargs.setdefault("pool_size", 10)
        kwargs.setdefault("max_overflow", 10)
        connect_args = dict(kwargs.pop("connect_args", {}))
        for name, value in POSTGRESQL_CONNECT_ARGS.items():
            if name not in parsed.query:  # a value in DATABASE_URL wins
                connect_args.setdefault(name, value)
        return create_engine(url, connect_args=connect_args, **kwargs)
    raise ValueError(f"unsupported database backend {parsed.get_backend_name()!r}")


def is_outage(ex: BaseException) -> bool:
    """Tell whether ``ex`` means the database cannot be reached or dropped the connection.

    True for a connection the driver reports lost (SQLAlchemy marks it invalidated), for a pool
    that cannot hand out a connection in time, and for PostgreSQL errors without an SQLSTATE
    (refused or broken connections) or in classes 08 (connection exception) and 57P (the server
    shutting down or starting up). Query errors, deadlocks, statement timeouts and SQLite's
    "database is locked" are not outages.
    """
    if isinstance(ex, PoolTimeout):
        return True
    if not isinstance(ex, DBAPIError):
        return False
    if ex.connection_invalidated:
        return True
    if not isinstance(ex, OperationalError | InterfaceError):
        return False
    orig = ex.orig
    if not type(orig).__module__.startswith("psycopg"):
        return False  # SQLite: locked or busy files are contention, not an outage
    sqlstate = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    return sqlstate is None or sqlstate.startswith(("08", "57P"))


# PostgreSQL SQLSTATEs of lock contention: lock_not_available, deadlock_detected,
# serialization_failure.
_CONTENTION_STATES = ("55P03", "40P01", "40001")


def is_contention(ex: BaseException) -> bool:
    """Tell whether ``ex`` means another writer held a lock: SQLite's "database is locked" (or
    "busy"), PostgreSQL's lock timeout, deadlock or serialization failure. Such work may
    succeed when tried again; any other error would fail the same way.
    """
    if not isinstance(ex, DBAPIError):
        return False
    orig = ex.orig
    if type(orig).__module__.startswith("psycopg"):
        sqlstate = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
        return sqlstate in _CONTENTION_STATES
    message = str(orig).lower()
    return isinstance(ex, OperationalError) and ("locked" in message or "busy" in message)


def _sqlite_engine(url: str, **kwargs: Any) -> Engine:
    staged_insert.register()  # before any connection opens: each then has the bulk insert
    connect_args = kwargs.pop("connect_args", {})
    connect_args.setdefault("check_same_thread", False)
    connect_args.setdefault("timeout", SQLITE_BUSY_TIMEOUT_MS / 1000)
    engine = create_engine(url, connect_args=connect_args, **kwargs)
    _keep_sqlite_files_private(engine, make_url(url).database)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the driver, open transactions so SAVEPOINT and BEGIN behave.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Writers that read before they write ask for IMMEDIATE: the write lock is taken up front,
        # so two of them queue on busy_timeout instead of one failing with "database is locked".
        immediate = conn.get_execution_options().get(IMMEDIATE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def _keep_sqlite_files_private(engine: Engine, database: str | None) -> None:
    """Keep the SQLite file and its -wal/-shm files readable by the station's account only.

    The folder is created 0700 when missing; the file is created 0600 before SQLite first opens
    it (SQLite gives the -wal and -shm files the database file's mode), and an existing file or
    side file with group or other bits is tightened now and again at the first connect.
    """
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass

    def tighten(*_args: Any) -> None:
        for candidate in (path, *(path.with_name(path.name + end) for end in SQLITE_SIDE_FILES)):
            try:
                mode = stat.S_IMODE(candidate.stat().st_mode)
                if mode & 0o077:
                    candidate.chmod(mode & 0o700)
            except OSError:
                continue  # absent, or not ours to change

    tighten()
    event.listen(engine, "first_connect", tighten)


def begin_write(engine: Engine) -> Any:
    """Open a transaction that intends to write; on SQLite it takes the write lock at BEGIN."""
    return engine.execution_options(**{IMMEDIATE_OPTION: True}).begin()
