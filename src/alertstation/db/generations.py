"""Bump and read the generation counters that keep table-mirroring caches honest.

Every mutation of a mirrored table bumps its generation in the same transaction. A reader keeps
the generation its cache was built from and re-checks the stored value at most once a second, so
a change made through one worker is seen by every worker within about a second, and a rolled-back
transaction never leaves a cache ahead of its table.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Connection, Engine, bindparam, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import SQLAlchemyError

from alertstation import lazy
from alertstation.db.tables import generations
from alertstation.db.types import utcnow

# Loaded by a PostgreSQL engine; a station on SQLite never needs it.
postgresql = lazy.module("sqlalchemy.dialects.postgresql")

T = TypeVar("T")
log = logging.getLogger(__name__)


def _bump_statement(dialect_insert: Any) -> Any:
    stmt = dialect_insert(generations).values(
        name=bindparam("g_name"), value=1, updated_at=bindparam("g_now")
    )
    return stmt.on_conflict_do_update(
        index_elements=[generations.c.name],
        set_={"value": generations.c.value + 1, "updated_at": bindparam("g_now_set")},
    )


# Built once per dialect, on first use: building the upsert cost more than running it.
_STATEMENTS: dict[str, tuple[Any, Any]] = {}
_STATEMENTS_LOCK = threading.Lock()


def _statements(conn: Connection) -> tuple[Any, Any]:
    """Return the dialect's (touch, bump) upserts."""
    name = "postgresql" if conn.dialect.name == "postgresql" else "sqlite"
    found = _STATEMENTS.get(name)
    if found is None:
        with _STATEMENTS_LOCK:
            found = _STATEMENTS.get(name)
            if found is None:
                insert = postgresql.insert if name == "postgresql" else sqlite.insert
                touch = _bump_statement(insert)
                found = _STATEMENTS[name] = (touch, touch.returning(generations.c.value))
    return found


def touch_generation(conn: Connection, name: str) -> None:
    """Increment the named generation like bump_generation, without reading the new value back.

    Nothing is read from the statement, so it can be sent with others in one round trip.
    """
    now = utcnow()
    stmt = _statements(conn)[0]
    conn.execute(stmt, {"g_name": name, "g_now": now, "g_now_set": now})


def bump_generation(conn: Connection, name: str) -> int:
    """Increment the named generation inside the caller's transaction and return the new value."""
    now = utcnow()
    stmt = _statements(conn)[1]
    params = {"g_name": name, "g_now": now, "g_now_set": now}
    return int(conn.execute(stmt, params).scalar_one())


def read_generation(conn: Connection, name: str) -> int:
    """Return the named generation, 0 when it was never bumped."""
    value = conn.execute(select(generations.c.value).where(generations.c.name == name)).scalar()
    return int(value or 0)


@dataclass(frozen=True)
class _Snapshot(Generic[T]):
    value: T
    generation: int
    checked_at: float


class GenerationCache(Generic[T]):
    """Keep a value built from a table, rebuilt when the table's generation moves.

    ``get()`` re-reads the generation at most once per ``check_interval`` seconds; ``clear()``
    forces a rebuild on the next ``get()`` (used after a mutation in this process). Value,
    generation and check time live in one immutable snapshot swapped in whole, so the common
    case (checked recently) is answered without taking the lock.
    """

    def __init__(
        self,
        engine: Engine,
        name: str,
        build: Callable[[Connection], T],
        *,
        check_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine = engine
        self._name = name
        self._build = build
        self._check_interval = check_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._snapshot: _Snapshot[T] | None = None

    @property
    def generation(self) -> int | None:
        """Return the generation the cached value was built from, None before the first build."""
        snapshot = self._snapshot
        return snapshot.generation if snapshot is not None else None

    def clear(self) -> None:
        """Drop the cached value so the next get() rebuilds it."""
        with self._lock:
            self._snapshot = None

    def get(self) -> T:
        """Return the cached value, rebuilding it when the stored generation has moved."""
        snapshot = self._snapshot  # the usual case, checked recently, without another call
        if snapshot is not None and self._clock() - snapshot.checked_at < self._check_interval:
            return snapshot.value
        return self.snapshot()[0]

    def snapshot(self) -> tuple[T, int]:
        """Return the cached value and the generation it was built from, after one check.

        For callers that answer many lookups (a request, a batch): take the value once and
        look up in it directly, instead of paying the check on every lookup. The value is
        the one immutable object ``get()`` returns; hold it no longer than the request or
        batch, so a change elsewhere is still seen within about ``check_interval``.
        """
        snapshot = self._snapshot
        if snapshot is not None and self._clock() - snapshot.checked_at < self._check_interval:
            return snapshot.value, snapshot.generation
        with self._lock:
            now = self._clock()
            snapshot = self._snapshot
            if snapshot is not None and now - snapshot.checked_at < self._check_interval:
                return snapshot.value, snapshot.generation
            with self._engine.connect() as conn:
                current = read_generation(conn, self._name)
                if snapshot is None or current != snapshot.generation:
                    # Build and read in one transaction so the value matches the generation.
                    value = self._build(conn)
                else:
                    value = snapshot.value
            self._snapshot = _Snapshot(value, current, now)
            return value, current


#: A monotonic retry time that has always passed: the store is not down. Caches that keep
#: answering through an outage compare with it before reading the clock.
NO_RETRY = float("-inf")


class FallbackCache(Generic[T]):
    """A GenerationCache for settings that must never fail a request while the database is down.

    ``get()`` answers the last good value (the ``default`` before the first) while the database
    cannot be read, logs the outage once per ``check_interval``, and tries again after that.
    """

    def __init__(
        self,
        engine: Engine,
        name: str,
        build: Callable[[Connection], T],
        default: T,
        *,
        what: str,
        check_interval: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._cache: GenerationCache[T] = GenerationCache(
            engine, name, build, check_interval=check_interval, clock=monotonic
        )
        self._what = what
        self._check_interval = check_interval
        self._monotonic = monotonic
        self._last = default
        self._retry_at = NO_RETRY

    def get(self) -> T:
        """Return the settings; while the database is down, the last good ones (or defaults)."""
        if self._retry_at != NO_RETRY and self._monotonic() < self._retry_at:
            return self._last
        try:
            self._last = self._cache.get()
        except SQLAlchemyError as ex:
            self._retry_at = self._monotonic() + self._check_interval
            log.error("%s unavailable (%s); using the last ones", self._what, type(ex).__name__)
        return self._last

    def clear(self) -> None:
        """Reload on the next get() (call after saving in this process)."""
        self._cache.clear()
        self._retry_at = NO_RETRY
