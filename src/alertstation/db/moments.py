"""Moments given as seconds since the epoch, made a minute at a time.

A log's times are whole seconds, minutes at a time: ``Moments`` makes each one's UTC ``datetime``
from its minute's (made once) and its seconds, and ``SqliteTexts`` gives the text SQLite stores
for that moment (a ``UTCDateTime``'s, "2026-11-24 10:00:06.000000") the same way, with no
``datetime`` made at all. Any other time (a fraction of a second) takes ``datetime`` itself.

``EpochSeconds`` marks a column given to ``BulkInsert.run_columns`` as seconds standing for
moments: it is stored as those moments, converted for the dialect by the ``UTCDateTime``
column's converter (``bulk.column_converter``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Final

_SECOND_STEPS: Final[tuple[timedelta, ...]] = tuple(timedelta(seconds=s) for s in range(60))
_SECOND_TEXTS: Final[tuple[str, ...]] = tuple(f"{s:02d}.000000" for s in range(60))
# "2026-11-24 10:00:" and its seconds
_MINUTE_TEXT: Final[int] = 17


class EpochSeconds(list[float]):
    """A column of moments, each given as seconds since the epoch (UTC)."""


def sqlite_text(moment: datetime) -> str:
    """The text SQLite stores for a UTC ``moment`` ("2026-11-24 10:00:00.000000"): what
    ``UTCDateTime``'s bind processor gives there."""
    return moment.isoformat(" ", "microseconds")[:26]


class _ByMinute:
    #: Minutes remembered before the memory starts anew.
    MINUTES: Final[int] = 65_536

    def __init__(self) -> None:
        self._minutes: dict[int, Any] = {}

    def _remember(self, minute: int, value: Any) -> Any:
        if len(self._minutes) >= self.MINUTES:
            self._minutes.clear()
        self._minutes[minute] = value
        return value


class Moments(_ByMinute):
    """``moments(ts)`` is ``datetime.fromtimestamp(ts, UTC)``, each minute's made once."""

    def __call__(self, ts: float) -> datetime:
        second = int(ts)
        if second != ts:
            return datetime.fromtimestamp(ts, UTC)
        minute = self._minutes.get(second // 60)
        if minute is None:
            start = datetime.fromtimestamp(second - second % 60, UTC)
            minute = self._remember(second // 60, start)
        return minute + _SECOND_STEPS[second % 60]


class SqliteTexts(_ByMinute):
    """``texts(ts)`` is ``sqlite_text(datetime.fromtimestamp(ts, UTC))``, each minute's text made
    once."""

    def __call__(self, ts: float) -> str:
        second = int(ts)
        if second != ts:
            return sqlite_text(datetime.fromtimestamp(ts, UTC))
        prefix = self._minutes.get(second // 60)
        if prefix is None:
            start = datetime.fromtimestamp(second - second % 60, UTC)
            prefix = self._remember(second // 60, sqlite_text(start)[:_MINUTE_TEXT])
        return prefix + _SECOND_TEXTS[second % 60]
