"""Hourly rollups: counts per hour and a roaring bitmap of the hour's visitor ids.

Complete hours (before the clock's current hour) are rolled up once and stored in
``web_request_rollups``, empty hours included, so the newest stored hour says how far the
rollups reach. The current hour is aggregated from raw rows on each read. Unique visitors of any
range are the size of the OR of its hours' bitmaps (``traffic_visitors`` gives every visitor key
a small integer id).

A write to an hour already rolled up (a request flushed just after the hour turned, an access-log
import, an anonymized address, a purge) calls ``invalidate_from``: the rollups from that hour on
are deleted and the next read rolls them up again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from pyroaring import BitMap
from sqlalchemy import Connection, Engine, and_, case, func, select
from sqlalchemy.exc import IntegrityError

from alertstation.db.engine import begin_write
from alertstation.traffic import daily
from alertstation.traffic.tables import (
    HOUR_SECONDS,
    hour_of_ts,
    web_request_logs,
    web_request_rollups,
)
from alertstation.traffic.tally import DayTotals
from alertstation.traffic.visitors import visitor_ids

t = web_request_logs
r = web_request_rollups
_CHUNK = 500


@dataclass
class Hour:
    """The aggregates of one hour."""

    hits: int = 0
    page_views: int = 0
    bytes: int = 0
    visitors: BitMap = field(default_factory=BitMap)


@dataclass
class Known:
    """Hours and days already tallied elsewhere (an import's own rows): stored as they are
    instead of being read back from raw rows."""

    hours: dict[int, Hour] = field(default_factory=dict)
    days: dict[int, DayTotals] = field(default_factory=dict)


def aggregate(
    conn: Connection, first_hour: int, last_hour: int, *, assign: bool = True
) -> dict[int, Hour]:
    """Return the aggregates of the raw rows of hours ``first_hour`` .. ``last_hour``."""
    # ``ts`` is indexed (``hour`` is not: one index less to keep up on every insert).
    span = and_(t.c.ts >= first_hour * HOUR_SECONDS, t.c.ts < (last_hour + 1) * HOUR_SECONDS)
    counts = select(
        t.c.hour,
        func.count(),
        func.coalesce(func.sum(case((t.c.page_view, 1), else_=0)), 0),
        func.coalesce(func.sum(func.coalesce(t.c.content_length, 0)), 0),
    ).where(span)
    hours = {
        int(hour): Hour(int(hits), int(views), int(size))
        for hour, hits, views, size in conn.execute(counts.group_by(t.c.hour))
    }
    pairs = conn.execute(select(t.c.hour, t.c.visitor_key).distinct().where(span)).all()
    ids = visitor_ids(conn, (key for _, key in pairs), assign=assign)
    for hour, key in pairs:
        hours[int(hour)].visitors.add(ids[key])
    return hours


def newest_rolled(conn: Connection) -> int | None:
    """Return the newest stored hour, or None when nothing is rolled up."""
    value = conn.execute(select(func.max(r.c.hour))).scalar()
    return int(value) if value is not None else None


def roll_up(conn: Connection, through_hour: int, known: dict[int, Hour] | None = None) -> int:
    """Store the rollups of every hour not yet stored up to ``through_hour`` (those in ``known``
    as given, the others from raw rows); return how many."""
    newest = newest_rolled(conn)
    if newest is None:
        oldest = conn.execute(select(func.min(t.c.ts))).scalar()
        if oldest is None:
            return 0
        first = hour_of_ts(oldest)
    else:
        first = newest + 1
    if first > through_hour:
        return 0
    known = known or {}
    hours: dict[int, Hour] = {}
    missing = (hour for hour in range(first, through_hour + 1) if hour not in known)
    for start, last in daily.runs(missing):
        hours.update(aggregate(conn, start, last))
    hours.update(known)
    rows = []
    for hour in range(first, through_hour + 1):
        found = hours.get(hour) or Hour()
        rows.append(
            {
                "hour": hour,
                "hits": found.hits,
                "page_views": found.page_views,
                "bytes": found.bytes,
                "visitors": found.visitors.serialize(),
            }
        )
    try:
        with conn.begin_nested():
            for start in range(0, len(rows), _CHUNK):
                conn.execute(r.insert().values(rows[start : start + _CHUNK]))
    except IntegrityError:  # another process rolled these hours up meanwhile
        return 0
    return len(rows)


def hour_of(moment: datetime) -> int:
    """Return the hour number (epoch hours) of a moment."""
    return hour_of_ts(moment.timestamp())


def ensure_rolled_up(
    engine: Engine, now: datetime, known: Callable[[Connection], Known] | None = None
) -> int:
    """Roll up every complete hour and day before ``now`` not stored yet (a write only when
    needed); return the number of hours rolled up. ``known`` gives, inside the write
    transaction, the hours and days tallied already (taken as they are)."""
    through = hour_of(now) - 1
    through_day = hour_of(now) // 24 - 1
    with engine.connect() as conn:
        newest, newest_day = newest_rolled(conn), daily.newest_day(conn)
    hours_done = newest is not None and newest >= through
    if hours_done and newest_day is not None and newest_day >= through_day:
        return 0
    with begin_write(engine) as conn:
        given = known(conn) if known is not None else Known()
        rolled = 0 if hours_done else roll_up(conn, through, given.hours)
        try:
            with conn.begin_nested():
                daily.roll_up_days(conn, through_day, given.days)
        except IntegrityError:  # another process rolled these days up meanwhile
            pass
        return rolled


def invalidate_from(conn: Connection, hour: int) -> None:
    """Forget the rollups of ``hour`` and every later hour, and of their days (rows changed)."""
    conn.execute(r.delete().where(r.c.hour >= hour))
    daily.invalidate_from(conn, hour)


def stored(conn: Connection, first_hour: int, last_hour: int) -> dict[int, Hour]:
    """Return the stored rollups of the hours with traffic of ``first_hour`` .. ``last_hour``."""
    query = select(r.c.hour, r.c.hits, r.c.page_views, r.c.bytes, r.c.visitors).where(
        r.c.hour.between(first_hour, last_hour), r.c.hits > 0
    )
    # A long period holds thousands of hours: read from the driver's cursor as it gives them
    # (integers and bytes need no processing), and only the hours with traffic (an hour without
    # hits has no visitors, and every caller leaves such hours out).
    result = conn.execute(query)
    try:
        found = result.cursor.fetchall()
    finally:
        result.close()
    deserialize = BitMap.deserialize
    return {
        int(hour): Hour(int(hits), int(views), int(size), deserialize(visitors))
        for hour, hits, views, size, visitors in found
    }


def hours(conn: Connection, first_hour: int, last_hour: int) -> dict[int, Hour]:
    """Return every hour of the range with traffic: the hours rolled up from the rollups, the
    later ones (the current hour, or any not rolled up yet) from raw rows. Writes nothing."""
    newest = newest_rolled(conn)
    found: dict[int, Hour] = {}
    if newest is not None and first_hour <= newest:
        found.update(stored(conn, first_hour, min(last_hour, newest)))
    live_first = first_hour if newest is None else max(first_hour, newest + 1)
    if live_first <= last_hour:
        found.update(aggregate(conn, live_first, last_hour, assign=False))
    return {hour: value for hour, value in found.items() if value.hits}
