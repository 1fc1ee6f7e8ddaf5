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

The work is split in two. ``RowTally`` tallies the rows where they are made, with the reader of
the lines (in a child process for a large file: ``importer.LineRows``), giving visitors ids of
its own; it needs no database. ``ImportRollups``, beside the writer, checks the days against the
database and, in ``finish``, stores the hourly and daily rollups of every complete hour and day
up to ``now`` (``rollups.ensure_rolled_up``): the tallied days from the tally, their visitor ids
mapped to the database's, and the others from raw rows.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from itertools import compress, groupby, repeat
from operator import floordiv, itemgetter
from typing import Any

from pyroaring import BitMap
from sqlalchemy import Connection, Engine, func, select

from alertstation.db.columns import transpose
from alertstation.traffic import daily, rollups
from alertstation.traffic.rows import ROW_COLUMNS
from alertstation.traffic.tables import web_request_logs
from alertstation.traffic.tally import (
    DAY_SECONDS,
    DayTotals,
    Tally,
    accumulate_columns,
    profile_tallies,
)
from alertstation.traffic.visitors import visitor_ids

t = web_request_logs
_TS = ROW_COLUMNS.index("ts")
_KEY = ROW_COLUMNS.index("visitor_key")
# The rows' ids are not known before the insert; ``accumulate_columns`` does not read them (they
# only order the rows), so the rows are put in (visitor, time) order by stable sorts of the
# arrival order, which is the order of their ids.
_TIME = itemgetter(_TS)
_VISITOR = itemgetter(_KEY)
# Days tallied in memory at most (a longer log imported at once reads the later days back): a
# year and a month, so a year's log is tallied as it streams by. A quiet day's tally is a few
# hundred KB; the days are handed to the rollups one at a time when the import ends.
MAX_DAYS = 400


class RowTally:
    """Tally rows per UTC day and hour as they stream by, giving visitors ids of its own.

    It holds no connection, so it travels with the reader of a file into a child process and
    back (``importer.LineRows``); ``ImportRollups`` decides which of its days are stored, and
    maps its visitor ids to the database's.
    """

    def __init__(self) -> None:
        # The limits, read when the tally is made (so they reach a child process as they are).
        self.max_days = MAX_DAYS
        self.chunk_rows = daily.CHUNK_ROWS
        self.open: dict[int, list[tuple[Any, ...]]] = {}  # days whose rows still arrive
        self.tallied: dict[int, DayTotals] = {}
        self.counts: dict[int, int] = {}  # rows of each tallied day
        self.left: set[int] = set()  # days left to the database path
        self.batch_days: set[int] = set()  # days of the batch being gathered
        self.hours: dict[int, dict[int, rollups.Hour]] = {}  # each tallied day's hours
        #: This tally's id of each visitor key, in the order given (0, 1, 2 ...).
        self.ids: dict[str, int] = {}

    def add_all(self, rows: list[tuple[Any, ...]]) -> None:
        """Take the rows (``ROW_COLUMNS`` order) of the batch being gathered, each run of rows
        of one day at once."""
        # Each row's day as ``ts // DAY_SECONDS`` gives it (a float), found and grouped without a
        # Python step per row.
        days = map(floordiv, map(_TIME, rows), repeat(DAY_SECONDS))
        start = 0
        for day, run in groupby(days):
            end = start + len(list(run))
            self._add_run(int(day), rows, start, end)
            start = end

    def _add_run(self, day: int, rows: list[tuple[Any, ...]], start: int, end: int) -> None:
        held = self.open.get(day)
        if held is None:
            if day in self.left:
                return
            if day in self.tallied:  # late rows of a day already tallied
                self.leave(day)
                return
            if len(self.open) + len(self.tallied) >= self.max_days:
                self.left.add(day)
                return
            held = self.open[day] = []
        if len(held) < self.chunk_rows:
            self.batch_days.add(day)
        if len(held) + end - start > self.chunk_rows:
            self.leave(day)
            return
        held.extend(rows[start:end])

    def leave(self, day: int) -> None:
        """Leave ``day`` to the database path."""
        self.left.add(day)
        self.open.pop(day, None)
        self.tallied.pop(day, None)
        self.hours.pop(day, None)

    def end_batch(self) -> set[int]:
        """End the batch being gathered: tally the days that got no row in it (their rows have
        all arrived, in a log in time order); return the days it holds rows of."""
        days, self.batch_days = self.batch_days, set()
        for day in list(self.open):
            if day not in days:
                self._tally(day, self.open.pop(day))
        return days

    def close(self) -> None:
        """Tally every day still open (the import's last line has been read)."""
        self.end_batch()
        for day in list(self.open):
            self._tally(day, self.open.pop(day))

    def _tally(self, day: int, rows: list[tuple[Any, ...]]) -> None:
        """Tally the rows of a day, and each of its hours."""
        # In (visitor, time) order: two stable sorts, the first over rows mostly in time order.
        rows.sort(key=_TIME)
        rows.sort(key=_VISITOR)
        columns = dict(zip(ROW_COLUMNS, transpose(rows, len(ROW_COLUMNS)), strict=True))
        ids = self.ids
        for key in columns["visitor_key"]:
            if key not in ids:
                ids[key] = len(ids)
        self.counts[day] = len(rows)
        self.tallied[day] = accumulate_columns(columns, ids)
        hours = columns["hour"]
        visitors = list(map(ids.__getitem__, columns["visitor_key"]))
        sizes = [size or 0 for size in columns["content_length"]]
        views = Counter(compress(hours, columns["page_view"]))
        self.hours[day] = {
            hour: rollups.Hour(hits, views[hour], spent, BitMap(seen))
            for (hour,), hits, spent, seen in profile_tallies([hours], visitors, sizes)
        }


class ImportRollups:
    """Which days of an import's ``RowTally`` are stored as tallied: those that had no rows
    before the import, and whose stored rows are exactly the ones the import wrote."""

    def __init__(self) -> None:
        self.checked: set[int] = set()  # days checked for rows stored before the import
        self.left: set[int] = set()  # days left to the database path

    def before_write(self, conn: Connection, days: set[int]) -> None:
        """In a batch's transaction, before its insert: leave the batch's new ``days`` that
        have rows."""
        for day in sorted(days.difference(self.checked)):
            start = day * DAY_SECONDS
            found = conn.execute(
                select(t.c.id).where(t.c.ts >= start, t.c.ts < start + DAY_SECONDS).limit(1)
            ).first()
            if found is not None:
                self.left.add(day)
        self.checked.update(days)

    def after_write(self, days: set[int], rows: int, inserted: int) -> None:
        """After a batch of ``rows`` rows of ``days`` inserted ``inserted``: when some lines
        were imported before, leave its days (their rows may differ from the tally's)."""
        if inserted != rows:
            self.left.update(days)

    def known(self, conn: Connection, tally: RowTally) -> rollups.Known:
        """Return the tallied days (and their hours) whose stored rows are exactly the ones this
        import wrote, with the database's visitor ids."""
        days: dict[int, DayTotals] = {}
        hours: dict[int, rollups.Hour] = {}
        kept = []
        for day in sorted(set(tally.tallied).difference(self.left)):
            start = day * DAY_SECONDS
            stored = conn.execute(
                select(func.count()).where(t.c.ts >= start, t.c.ts < start + DAY_SECONDS)
            ).scalar_one()
            if stored == tally.counts[day]:
                kept.append(day)
        if not kept:
            return rollups.Known()
        stored_ids = visitor_ids(conn, tally.ids)
        mapping = [stored_ids[key] for key in tally.ids]  # this tally's id -> the database's
        for day in kept:  # each day's own tally let go as its copy is made
            days[day] = _with_ids(tally.tallied.pop(day), mapping)
            found = tally.hours.pop(day)
            for hour in range(day * 24, day * 24 + 24):
                seen = found.get(hour)
                hours[hour] = (
                    rollups.Hour(
                        seen.hits, seen.page_views, seen.bytes, _mapped(seen.visitors, mapping)
                    )
                    if seen is not None
                    else rollups.Hour()
                )
        return rollups.Known(hours, days)

    def finish(self, engine: Engine, now: datetime, tally: RowTally) -> int:
        """Store the rollups of every complete hour and day before ``now`` not stored yet, the
        tallied days from ``tally``; return the number of hours rolled up."""
        tally.close()
        return rollups.ensure_rolled_up(engine, now, lambda conn: self.known(conn, tally))


def _mapped(visitors: BitMap, mapping: list[int]) -> BitMap:
    """Return ``visitors`` with each id replaced by ``mapping``'s."""
    return BitMap([mapping[visitor] for visitor in visitors])


def _with_ids(totals: DayTotals, mapping: list[int]) -> DayTotals:
    """Return a copy of ``totals`` whose visitor bitmaps hold ``mapping``'s ids (a tally
    without visitors, as every error answer's, is the same in both: it is shared)."""
    copy = DayTotals(totals.visits, totals.bounces, totals.visit_seconds, errors=totals.errors)
    for name, tallies in totals.lists.items():
        copy.lists[name] = {
            key: Tally(
                tally.hits,
                tally.bytes,
                tally.total_ms,
                tally.max_ms,
                _mapped(tally.visitors, mapping),
            )
            if tally.visitors
            else tally
            for key, tally in tallies.items()
        }
    return copy
