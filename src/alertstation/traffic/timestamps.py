"""The time of an access-log line: ``10/Oct/2026:13:55:36 -0700`` (nginx/Apache ``%t``).

A request's time is stored as a moment too (``occurred_at``), so only times from the epoch to the
end of year 9999 are taken (``storable_time``); any other is a malformed time.
"""

from __future__ import annotations

import calendar
from datetime import datetime
from functools import lru_cache
from typing import Final

_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


@lru_cache(maxsize=1024)
def _day_start(year: int, month: int, day: int) -> int:
    """Return the epoch time of a day's start; ValueError for a day its month does not have
    (``timegm`` would roll 31 Feb over into March)."""
    if not 1 <= year <= 9999 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise ValueError(f"no day {year:04d}-{month:02d}-{day:02d}")
    return calendar.timegm((year, month, day, 0, 0, 0))


#: The stored times: from the epoch up to (not including) the start of year 10000, UTC.
FIRST_TIME: Final[float] = 0.0
END_TIME: Final[float] = 253_402_300_800.0


def storable_time(ts: float) -> float:
    """Return ``ts`` when a row can store it (``FIRST_TIME`` <= ts < ``END_TIME``); ValueError
    otherwise (NaN included)."""
    if not FIRST_TIME <= ts < END_TIME:
        raise ValueError(f"time {ts!r} is outside 1970-01-01 .. 9999-12-31")
    return ts


_MINUTES: dict[str, int] = {}
_MINUTES_KEPT = 100_000


def parse_log_time(text: str) -> float:
    """Return the epoch time of ``10/Oct/2026:13:55:36 -0700``; ValueError when malformed or
    not storable (``storable_time``).

    Each minute (with its offset) is worked out once; a log's lines share their minutes. A
    minute is remembered only once a time in it is storable: it starts at or after the epoch,
    and its last second is before ``END_TIME`` (both whole minutes).
    """
    minute = _MINUTES.get(text[:17] + text[20:])
    seconds = text[18:20]
    if (
        minute is not None
        and text[17] == ":"
        and seconds.isdigit()
        and seconds.isascii()
        and seconds < "60"
    ):
        return float(minute + int(seconds))
    value = storable_time(_parse(text))
    if len(_MINUTES) >= _MINUTES_KEPT:
        _MINUTES.clear()
    _MINUTES[text[:17] + text[20:]] = int(value) - int(text[18:20])
    return value


def _parse(text: str) -> float:
    if len(text) != 26 or text[2] != "/" or text[6] != "/" or text[11] != ":":
        return datetime.strptime(text, "%d/%b/%Y:%H:%M:%S %z").timestamp()
    month = _MONTHS.get(text[3:6])
    if month is None:
        raise ValueError(f"bad month in {text!r}")
    try:
        start = _day_start(int(text[7:11]), month, int(text[0:2]))
        hours, minutes, secs = int(text[12:14]), int(text[15:17]), int(text[18:20])
        zone_minutes = int(text[24:26])
        offset = int(text[22:24]) * 3600 + zone_minutes * 60
    except ValueError:
        raise ValueError(f"bad time {text!r}") from None
    sign = {"+": 1, "-": -1}.get(text[21])
    # Each field within its range: an impossible time is refused, never rolled over.
    in_range = 0 <= hours < 24 and 0 <= minutes < 60 and 0 <= secs < 60 and 0 <= zone_minutes < 60
    if sign is None or text[20] != " " or not in_range:
        raise ValueError(f"bad time {text!r}")
    clock = hours * 3600 + minutes * 60 + secs
    return float(start + clock - sign * offset)
