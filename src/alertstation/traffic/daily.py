"""Daily rollups: each complete UTC day's grouped lists, visits, errors, timings and sign-ins.

The dashboard without drill-down filters reads every list from here, so a 30-day dashboard over
millions of rows reads a few thousand rollup rows instead of scanning the raw rows once per list.

* ``web_request_days``: one row per rolled-up day (empty days too, so the rows say which days are
  rolled): its visits, bounces and the visits' total length. Visits end at a gap of over 30
  minutes and at midnight UTC (``docs/traffic.md``), so each day's visits stand alone.
* ``web_request_day_groups``: per day, per list (``dimension``) and per value (``key``, a JSON
  array of the list's columns): hits, bytes, response-time total and maximum, and the roaring
  bitmap of the visitors' ids. The error answers are one row per address (``ERRORS``, the key
  ``["<address>"]``), each (path, status) and its count in ``detail``.

A day is rolled up once it is over, in one pass over its rows in Python (``traffic.tally``); the
days not rolled up yet (today) are accumulated the same way from raw rows
on each read, with passing visitor ids, so nothing is written by a read. Rows are held in memory
``CHUNK_ROWS`` at a time at most: a larger day (an imported log of a busy site) is read sorted by
visitor and tallied a batch of whole visitors at a time (``raw_totals``). A write to a day already
rolled up drops it and every later day (``invalidate_from``), and the next read rolls
them up again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any, Final

import orjson
from pyroaring import BitMap
from sqlalchemy import Connection, Select, and_, func, or_, select

from alertstation.db.bulk import BulkInsert
from alertstation.traffic.tables import (
    web_request_day_groups,
    web_request_days,
    web_request_logs,
)
from alertstation.traffic.tally import (
    COLUMNS,
    DAY_SECONDS,
    ERRORS,
    DayTotals,
    Tally,
    accumulate,
    add_answers,
    merge,
)
from alertstation.traffic.visitors import visitor_ids

t = web_request_logs
_GROUP_ROWS = BulkInsert(
    web_request_day_groups,
    ("day", "dimension", "key", "hits", "bytes", "total_ms", "max_ms", "visitors", "detail"),
)

_ORDER = itemgetter(COLUMNS.index("visitor_key"), COLUMNS.index("ts"), COLUMNS.index("id"))
_VISITOR = COLUMNS.index("visitor_key")
#: Raw rows held in memory at once when totals are worked out from them (``raw_totals``).
CHUNK_ROWS: Final[int] = 100_000
# Days named in one query of ``fill_visitors`` (each day a seek of the primary key per value).
_DAYS_AT_ONCE = 500
#: A period whose rolled-up days are at least 1 / LONG_SHARE of all of them sums its lists from
#: the sums index (``_add_sums``).
LONG_SHARE: Final[int] = 4


def raw_rows(conn: Connection, condition: Any) -> Sequence[Sequence[Any]]:
    """Return the raw rows matching ``condition`` in ``COLUMNS`` order, by visitor and time."""
    # Sorting here is cheaper than the database sorting the wide rows in a temporary b-tree.
    rows = [tuple(row) for row in conn.execute(select(*(t.c[n] for n in COLUMNS)).where(condition))]
    rows.sort(key=_ORDER)
    return rows


def raw_totals(conn: Connection, condition: Any, *, assign: bool = True) -> DayTotals:
    """Return the totals of the raw rows matching ``condition`` (``visitor_ids`` gives the
    visitors ids, with ``assign``). Up to ``CHUNK_ROWS`` rows are read at once and sorted here;
    more are read sorted by the database and tallied a batch of whole visitors at a time (each
    visitor's visits stand alone, so the batches' totals add up to the whole)."""
    count = conn.execute(select(func.count()).where(condition)).scalar_one()
    if count <= CHUNK_ROWS:
        rows = raw_rows(conn, condition)
        return accumulate(rows, visitor_ids(conn, {row[_VISITOR] for row in rows}, assign=assign))
    keys = conn.execute(select(t.c.visitor_key).where(condition).distinct()).scalars()
    ids = visitor_ids(conn, keys, assign=assign)
    totals = DayTotals()
    for rows in visitor_batches(conn, condition, CHUNK_ROWS):
        totals.add(accumulate(rows, ids))
    return totals


def visitor_batches(
    conn: Connection, condition: Any, size: int
) -> Iterator[Sequence[Sequence[Any]]]:
    """Yield the raw rows matching ``condition`` in ``COLUMNS`` order, sorted by visitor, time
    and id, in lists of about ``size`` rows that each hold every row of their visitors (a
    visitor with more rows than ``size`` makes a longer list)."""
    query = select(*(t.c[n] for n in COLUMNS)).where(condition)
    query = query.order_by(t.c.visitor_key, t.c.ts, t.c.id)
    query = query.execution_options(yield_per=min(size, 10_000))  # this query's, not conn's
    pending: list[tuple[Any, ...]] = []
    for part in conn.execute(query).partitions():
        pending.extend(map(tuple, part))
        if len(pending) < size:
            continue
        last = pending[-1][_VISITOR]
        cut = len(pending)
        while cut and pending[cut - 1][_VISITOR] == last:  # the last visitor may go on
            cut -= 1
        if cut:
            yield pending[:cut]
            pending = pending[cut:]
    if pending:
        yield pending


def _day_condition(first_day: int, last_day: int) -> Any:
    return and_(t.c.ts >= first_day * DAY_SECONDS, t.c.ts < (last_day + 1) * DAY_SECONDS)


# --- storing and reading --------------------------------------------------------------------


def newest_day(conn: Connection) -> int | None:
    """Return the newest rolled-up day (epoch days), or None."""
    value = conn.execute(select(func.max(web_request_days.c.day))).scalar()
    return int(value) if value is not None else None


def roll_up_days(
    conn: Connection, through_day: int, known: dict[int, DayTotals] | None = None
) -> int:
    """Store every day not rolled up yet up to ``through_day`` (in one transaction, the
    caller's), the days in ``known`` as given and the others from raw rows; return how many."""
    newest = newest_day(conn)
    if newest is None:
        oldest = conn.execute(select(func.min(t.c.ts))).scalar()
        if oldest is None:
            return 0
        first = int(oldest // DAY_SECONDS)
    else:
        first = newest + 1
    known = known or {}
    for day in range(first, through_day + 1):
        if day in known:
            _store(conn, day, known[day])
            continue
        _store(conn, day, raw_totals(conn, _day_condition(day, day)))
    return max(0, through_day - first + 1)


def _store(conn: Connection, day: int, totals: DayTotals) -> None:
    conn.execute(
        web_request_days.insert().values(
            day=day,
            visits=totals.visits,
            bounces=totals.bounces,
            visit_seconds=totals.visit_seconds,
        )
    )
    values = [
        (
            day,
            name,
            orjson.dumps(list(key)).decode(),
            tally.hits,
            tally.bytes,
            tally.total_ms,
            tally.max_ms,
            tally.visitors.serialize() if tally.visitors else None,
            None,
        )
        for name, tallies in totals.lists.items()
        for key, tally in tallies.items()
    ]
    # One row per address, its answers in ``detail``: a scanner's many paths are one row a day.
    values += [
        (
            day,
            ERRORS,
            orjson.dumps([address]).decode(),
            sum(answers.values()),
            0,
            None,
            None,
            None,
            orjson.dumps(
                [[path, status, count] for (path, status), count in answers.items()]
            ).decode(),
        )
        for address, answers in totals.errors.items()
    ]
    _GROUP_ROWS.run(conn, values)


def invalidate_from(conn: Connection, hour: int) -> None:
    """Forget the day of ``hour`` and every later day."""
    day = hour // 24
    conn.execute(web_request_day_groups.delete().where(web_request_day_groups.c.day >= day))
    conn.execute(web_request_days.delete().where(web_request_days.c.day >= day))


def prune_before(conn: Connection, cutoff_hour: int) -> None:
    """Forget every day that starts before ``cutoff_hour`` (its rows are being pruned)."""
    day = -(-cutoff_hour // 24)  # the first day starting at or after the cutoff
    conn.execute(web_request_day_groups.delete().where(web_request_day_groups.c.day < day))
    conn.execute(web_request_days.delete().where(web_request_days.c.day < day))


def _stored(
    conn: Connection, days: list[int], *, lists: bool = True, visitors: bool = True
) -> DayTotals:
    """Return the stored totals of the rolled-up ``days``: their visits, and with ``lists``
    every list and the error answers; without ``visitors`` the lists' visitor bitmaps are left
    empty, to be read for the values shown (``fill_visitors``)."""
    totals = DayTotals()
    if not days:
        return totals
    first, last = days[0], days[-1]
    visits = select(
        func.coalesce(func.sum(web_request_days.c.visits), 0),
        func.coalesce(func.sum(web_request_days.c.bounces), 0),
        func.coalesce(func.sum(web_request_days.c.visit_seconds), 0.0),
    ).where(web_request_days.c.day.between(first, last))
    count, bounces, seconds = conn.execute(visits).one()
    totals.visits, totals.bounces, totals.visit_seconds = int(count), int(bounces), float(seconds)
    if not lists:
        return totals
    g = web_request_day_groups
    days_in = g.c.day.between(first, last)
    for text, detail in _fetched(
        conn, select(g.c.key, g.c.detail).where(days_in, g.c.dimension == ERRORS)
    ):
        add_answers(
            totals.errors,
            orjson.loads(text)[0],
            (((path, status), count) for path, status, count in orjson.loads(detail)),
        )
    if visitors:
        _add_groups(conn, totals, days_in)
    else:
        _add_sums(conn, totals, first, last, _is_long(conn, days))
        totals.unread_visitors = days
    return totals


def _add_groups(conn: Connection, totals: DayTotals, days_in: Any) -> None:
    """Add the group rows of the days ``days_in`` to ``totals``, visitor bitmaps and all."""
    g = web_request_day_groups
    query = select(
        g.c.dimension, g.c.key, g.c.hits, g.c.bytes, g.c.total_ms, g.c.max_ms, g.c.visitors
    ).where(days_in, g.c.dimension != ERRORS)
    decoded: dict[str, tuple[Any, ...]] = {}
    lists = totals.lists
    for name, text, hits, size, total_ms, max_ms, visitors in _fetched(conn, query):
        key = decoded.get(text)
        if key is None:
            key = decoded[text] = tuple(orjson.loads(text))
        bitmap = BitMap.deserialize(visitors) if visitors else BitMap()
        tally = Tally(int(hits), int(size), float(total_ms or 0.0), max_ms, bitmap)
        own = lists[name]
        if key in own:
            merge(own, key, tally)
        else:  # the key's first day: taken over as it is (``merge`` would do the same)
            own[key] = tally


def _is_long(conn: Connection, days: list[int]) -> bool:
    """Tell whether the rolled-up ``days`` are at least 1 / ``LONG_SHARE`` of all rolled-up days."""
    every = conn.execute(select(func.count()).select_from(web_request_days)).scalar_one()
    return len(days) * LONG_SHARE >= int(every)


def _add_sums(
    conn: Connection, totals: DayTotals, first: int, last: int, long: bool = False
) -> None:
    """Add the group rows of the days ``first`` .. ``last`` to ``totals`` without their
    visitors: hits, bytes and times summed per value in SQL (as ``merge`` sums them), each
    value's bitmap left empty (``sums_query``)."""
    lists = totals.lists
    for name, text, hits, size, total_ms, max_ms in _fetched(conn, sums_query(first, last, long)):
        tally = Tally(int(hits), int(size), float(total_ms), max_ms, BitMap())
        lists[name][tuple(orjson.loads(text))] = tally


def sums_query(first: int, last: int, long: bool) -> Select[Any]:
    """Return the query of each list's values summed over the days ``first`` .. ``last``: list,
    value, hits, bytes, response-time total and maximum.

    A ``long`` period's rows are read in list and value order from the index holding their sums
    (``ix_web_request_day_groups_sums``), each row's day checked as it is read: the sums are
    taken as the index is scanned, instead of sorting half a million rows read by day. The day
    is compared as ``day + 0``, which no index serves, so the database does not read by day.
    A short period reads its days' rows by day (a small part of the index's entries).
    """
    g = web_request_day_groups
    days_in = (g.c.day + 0 if long else g.c.day).between(first, last)
    return (
        select(
            g.c.dimension,
            g.c.key,
            func.sum(g.c.hits),
            func.sum(g.c.bytes),
            func.coalesce(func.sum(g.c.total_ms), 0.0),
            func.max(g.c.max_ms),
        )
        .where(days_in, g.c.dimension != ERRORS)
        .group_by(g.c.dimension, g.c.key)
    )


def fill_visitors(
    conn: Connection, totals: DayTotals, wanted: dict[str, list[tuple[Any, ...]]]
) -> None:
    """Read the stored visitor bitmaps of the ``wanted`` values of each list into ``totals``,
    when they were left unread (``totals(..., visitors=False)``).

    A list shows its first few values only, each with its visitors: reading the bitmaps of
    those alone, instead of every value of every day, is most of a long period's dashboard.
    """
    days, totals.unread_visitors = totals.unread_visitors, None
    if not days:
        return
    g = web_request_day_groups
    for name, keys in wanted.items():
        texts = {orjson.dumps(list(key)).decode(): key for key in keys}
        if not texts:
            continue
        own = totals.lists[name]
        for start in range(0, len(days), _DAYS_AT_ONCE):
            query = select(g.c.key, g.c.visitors).where(
                g.c.day.in_(days[start : start + _DAYS_AT_ONCE]),
                g.c.dimension == name,
                g.c.key.in_(list(texts)),
                g.c.visitors.is_not(None),
            )
            for text, blob in _fetched(conn, query):
                own[texts[text]].visitors |= BitMap.deserialize(blob)


def _fetched(conn: Connection, query: Any) -> list[tuple[Any, ...]]:
    """Return the rows of ``query`` at once from the driver's cursor, as it gives them.

    A month of days holds a few hundred thousand group rows; none of their columns needs
    SQLAlchemy's processing (text, integers, floats and bytes), and fetching them so costs a
    third of reading them as SQLAlchemy rows."""
    result = conn.execute(query)
    try:
        return list(result.cursor.fetchall())
    finally:
        result.close()


def totals(
    conn: Connection,
    first_day: int,
    last_day: int,
    *,
    lists: bool = True,
    visitors: bool = True,
) -> DayTotals:
    """Return the totals of the days ``first_day`` .. ``last_day`` with no drill-down filter:
    the rolled-up days from their rollups, the others from raw rows. Writes nothing.

    Without ``lists`` the rolled-up days give their visits only; without ``visitors`` their
    lists' visitor bitmaps are left unread until ``fill_visitors``."""
    rolled = [
        int(day)
        for (day,) in conn.execute(
            select(web_request_days.c.day)
            .where(web_request_days.c.day.between(first_day, last_day))
            .order_by(web_request_days.c.day)
        )
    ]
    result = _stored(conn, rolled, lists=lists, visitors=visitors)
    live = runs(sorted(set(range(first_day, last_day + 1)) - set(rolled)))
    if live:
        condition = or_(*(_day_condition(a, b) for a, b in live))
        result.add(raw_totals(conn, condition, assign=False))
    return result


def runs(days: Iterable[int]) -> list[tuple[int, int]]:
    """Return the runs of consecutive numbers (days or hours) as (first, last) pairs."""
    runs: list[tuple[int, int]] = []
    for day in days:
        if runs and runs[-1][1] == day - 1:
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs
