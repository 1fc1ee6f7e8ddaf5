"""Column types shared by every table."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """Store timestamps in UTC; read naive values from old rows as UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return as_utc(value)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return as_utc(value)


def as_utc(value: datetime | None) -> datetime | None:
    """Return ``value`` in UTC; a naive value is taken to be UTC already."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def utcnow() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return datetime.now(UTC)


def epoch_seconds(clock: Callable[[], datetime]) -> Callable[[], float]:
    """Return ``clock`` read as seconds since the epoch: the system clock itself when ``clock``
    is :func:`utcnow` (far quicker than making a datetime), else ``clock()`` in UTC."""
    if clock is utcnow:
        return time.time
    return lambda: as_utc(clock()).timestamp()  # type: ignore[union-attr]
