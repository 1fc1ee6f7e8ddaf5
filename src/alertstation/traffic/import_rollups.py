"""The rollups of an access-log import, tallied from its rows as they stream by.

An import already holds every row it writes, and visits end at midnight UTC, so each UTC day
stands alone: a day that had no stored rows before the import is tallied from the import's own
rows (``traffic.tally.accumulate``, the function the database path uses), and its hours are
counted the same way, instead of reading the rows back once the import is done.

A day keeps to the database path (``traffic.daily`` and ``traffic.rollups`` read its raw rows)
when any of these holds:

* it had stored rows before the import (checked before the import's first write to it);
* a row of it arrives after the day was tallied (the log is out of time order across days);
* a batch holding rows of it inserted fewer rows than it held (lines imported before);
* when the rollups are stored, the database holds a different number of rows for it than the
  import wrote (another writer added some meanwhile).
* the import already tallies ``MAX_DAYS`` days (a day's tallies stay in memory until the end);
* more of its rows arrive than ``daily.CHUNK_ROWS`` (a day's rows are held until the day is
  tallied, so memory stays bounded on a day of any size; the database path reads such a day a
  batch of whole visitors at a time).

``finish`` stores the hourly and daily rollups of every complete hour and day up to ``now``
(``rollups.ensure_rolled_up``), taking the tallied days from here and the others from raw rows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime
from itertools import compress
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, Engine, func, select

from alertstation.traffic import daily, rollups
from alertstation.traffic.rows import ROW_COLUMNS
from alertstation.traffic.tables import web_request_logs
from alertstation.traffic.tally import DAY_SECONDS, DayTotals, accumulate_columns
from alertstation.traffic.visitors import visitor_ids

t = web_request_logs
_TS = ROW_COLUMNS.index("ts")
_KEY = ROW_COLUMNS.index("visitor_key")
# The rows' ids are not known before the insert; ``accumulate_columns`` does not read them (they
# only order the rows), so the rows are put in (visitor, time) order by a stable sort of the
# arrival order, which is the order of their ids.
_VISITOR_TIME = itemgetter(_KEY, _TS)
# Days tallied in memory at most (a year's log imported at once reads the later days back).
MAX_DAYS = 100


class ImportRollups:
    """Tally one import's rows per UTC day and hour, for the days that had no rows before it."""

    def __init__(self) -> None:
        self.open: dict[int, list[tuple[Any, ...]]] = {}  # days whose rows still arrive
        self.tallied: dict[int, DayTotals] = {}
        self.counts: dict[int, int] = {}  # rows of each tallied day given to the database
        self.left: set[int] = set()  # days left to the database path
        self.unchecked: set[int] = set()  # days not yet checked for stored rows
        self.batch_days: set[int] = set()  # days of the batch being gathered
        self.hours: dict[int, dict[int, rollups.Hour]] = {}  # each tallied day's hours
        self.ids: dict[str, int] = {}

    def add(self, row: tuple[Any, ...]) -> None:
        """Take one row (``ROW_COLUMNS`` order) about to be written."""
        day = int(row[_TS] // DAY_SECONDS)
        rows = self.open.get(day)
        if rows is None:
            if day in self.left:
                return
            if day in self.tallied:  # a late row of a day already tallied
                self.leave(day)
                return
            if len(self.open) + len(self.tallied) >= MAX_DAYS:
                self.left.add(day)
                return
            rows = self.open[day] = []
            self.unchecked.add(day)
        if len(rows) >= daily.CHUNK_ROWS:
            self.leave(day)
            return
        self.batch_days.add(day)
        rows.append(row)

    def leave(self, day: int) -> None:
        """Leave ``day`` to the database path."""
        self.left.add(day)
        self.open.pop(day, None)
        self.tallied.pop(day, None)
        self.hours.pop(day, None)

    def before_write(self, conn: Connection) -> None:
        """In the batch's transaction, before its insert: leave the new days that have rows."""
        for day in sorted(self.unchecked):
            start = day * DAY_SECONDS
            found = conn.execute(
                select(t.c.id).where(t.c.ts >= start, t.c.ts < start + DAY_SECONDS).limit(1)
            ).first()
            if found is not None:
                self.leave(day)
        self.unchecked.clear()

    def after_write(
        self, conn: Connection, rows: list[tuple[Any, ...]], inserted: int, final: bool = False
    ) -> None:
        """In the batch's transaction, after its insert of ``inserted`` of ``rows``: give the
        visitors ids and tally the days that got no row in this batch (every day when
        ``final``)."""
        if inserted != len(rows):  # some lines were imported before: their days may differ
            for day in self.batch_days:
                self.leave(day)
        new = {row[_KEY] for row in rows}.difference(self.ids)
        if new:
            self.ids.update(visitor_ids(conn, new))
        for day in list(self.open):
            if final or day not in self.batch_days:
                self._tally(day, self.open.pop(day))
        self.batch_days = set()

    def _tally(self, day: int, rows: list[tuple[Any, ...]]) -> None:
        """Tally the rows of a day, and each of its hours."""
        rows.sort(key=_VISITOR_TIME)
        columns = dict(zip(ROW_COLUMNS, zip(*rows, strict=True), strict=True))
        self.counts[day] = len(rows)
        self.tallied[day] = accumulate_columns(columns, self.ids)
        hours = columns["hour"]
        found = {hour: rollups.Hour(hits) for hour, hits in Counter(hours).items()}
        for hour, views in Counter(compress(hours, columns["page_view"])).items():
            found[hour].page_views = views
        spent: defaultdict[int, int] = defaultdict(int)
        for hour, size in zip(hours, columns["content_length"], strict=True):
            if size:
                spent[hour] += size
        for hour, size in spent.items():
            found[hour].bytes = size
        for hour, key in set(zip(hours, columns["visitor_key"], strict=True)):
            found[hour].visitors.add(self.ids[key])
        self.hours[day] = found

    def known(self, conn: Connection) -> rollups.Known:
        """Return the tallied days (and their hours) whose stored rows are exactly the ones this
        import wrote."""
        days: dict[int, DayTotals] = {}
        hours: dict[int, rollups.Hour] = {}
        for day, totals in self.tallied.items():
            start = day * DAY_SECONDS
            stored = conn.execute(
                select(func.count()).where(t.c.ts >= start, t.c.ts < start + DAY_SECONDS)
            ).scalar_one()
            if stored != self.counts[day]:
                continue
            days[day] = totals
            found = self.hours[day]
            for hour in range(day * 24, day * 24 + 24):
                hours[hour] = found.get(hour) or rollups.Hour()
        return rollups.Known(hours, days)

    def finish(self, engine: Engine, now: datetime) -> int:
        """Store the rollups of every complete hour and day before ``now`` not stored yet, the
        tallied days from here; return the number of hours rolled up."""
        return rollups.ensure_rolled_up(engine, now, self.known)
