"""An import's rollups tallied from its own rows give the dashboard the raw rows give."""

from __future__ import annotations

import gc
import random
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select

from alertstation.traffic import daily, import_rollups, importer, reports, rollups
from alertstation.traffic.importer import LogImport, import_file, import_lines, parse_combined
from alertstation.traffic.period import Filters, parse_period
from alertstation.traffic.rows import Observed, build_row
from alertstation.traffic.tables import (
    web_request_day_groups,
    web_request_days,
    web_request_logs,
    web_request_rollups,
)
from alertstation.traffic.tally import DAY_SECONDS, ERRORS
from tests.fuzz.fuzzing import fuzz
from tests.support import Clock
from tests.traffic import accesslog
from tests.traffic.conftest import empty

pytestmark = pytest.mark.usefixtures("clean_log")
LINES = 3_000
DAYS = 6


def dashboard(engine: Engine, now: datetime) -> dict[str, Any]:
    with engine.connect() as conn:
        period = parse_period({"days": str(DAYS + 2)}, now.date())
        return reports.dashboard(conn, period, Filters(), limit=10_000)


def from_raw_rows(engine: Engine, now: datetime) -> dict[str, Any]:
    """The dashboard with every rollup deleted (in a transaction rolled back)."""
    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            for table in (web_request_rollups, web_request_days, web_request_day_groups):
                conn.execute(table.delete())
            period = parse_period({"days": str(DAYS + 2)}, now.date())
            return reports.dashboard(conn, period, Filters(), limit=10_000)
        finally:
            transaction.rollback()


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def expected_dashboard(engine: Engine, log: Path, now: datetime) -> dict[str, Any]:
    """Return the dashboard after an ordinary import of ``log``, the database emptied again."""
    import_file(engine, log, "combined", None, now=now)
    expected = dashboard(engine, now)
    empty(engine)
    return expected


def rolled_days(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(web_request_days)).scalar_one())


@pytest.fixture
def now() -> datetime:
    return Clock()().replace(minute=0, second=0, microsecond=0)


@pytest.fixture
def lines(now: datetime) -> list[str]:
    return accesslog.lines(LINES, now, days=DAYS, seed=23)


def no_reading_back(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the import read its rows back")


@pytest.mark.usefixtures("reading")
def test_an_import_into_an_empty_database_rolls_up_from_its_own_rows(
    engine: Engine, tmp_path: Path, now: datetime, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write(tmp_path / "access.log", lines)
    with monkeypatch.context() as patch:  # the complete days and hours come from the stream
        patch.setattr(daily, "raw_rows", no_reading_back)
        patch.setattr(rollups, "aggregate", no_reading_back)
        result = import_file(engine, log, "combined", None, now=now)
    assert result.imported == LINES
    assert rolled_days(engine) >= DAYS - 1
    with engine.connect() as conn:
        assert daily.newest_day(conn) == rollups.hour_of(now) // 24 - 1
        assert rollups.newest_rolled(conn) == rollups.hour_of(now) - 1
    assert rollups.ensure_rolled_up(engine, now) == 0  # nothing left to roll up
    streamed = dashboard(engine, now)
    assert streamed["summary"]["hits"] == LINES
    assert streamed == from_raw_rows(engine, now)

    # The same lines imported without the stream (rolled up from raw rows afterwards).
    empty(engine)
    import_file(engine, log, "combined", None)
    rollups.ensure_rolled_up(engine, now)
    assert dashboard(engine, now) == streamed


@pytest.mark.usefixtures("reading")
def test_a_days_error_answers_are_one_row_per_address_holding_each_answer(
    engine: Engine, tmp_path: Path, now: datetime, lines: list[str]
) -> None:
    import_file(engine, write(tmp_path / "access.log", lines), "combined", None, now=now)
    g, t = web_request_day_groups, web_request_logs
    day = (func.floor(t.c.ts / DAY_SECONDS)).label("day")
    with engine.connect() as conn:
        stored = conn.execute(
            select(g.c.day, g.c.key, g.c.hits, g.c.detail).where(g.c.dimension == ERRORS)
        ).all()
        rolled = set(conn.execute(select(web_request_days.c.day)).scalars())
        raw = conn.execute(
            select(day, t.c.client_ip, t.c.path, t.c.status, func.count())
            .where(t.c.status >= 400)
            .group_by(day, t.c.client_ip, t.c.path, t.c.status)
        ).all()
    expected: dict[tuple[int, str], dict[tuple[str, int], int]] = {}
    for when, address, path, status, count in raw:
        if int(when) in rolled:
            expected.setdefault((int(when), address), {})[(path, status)] = count
    found = {
        (when, orjson.loads(key)[0]): {
            (path, status): n for path, status, n in orjson.loads(detail)
        }
        for when, key, _hits, detail in stored
    }
    assert len(stored) == len(found) == len(expected) > DAYS  # one row per address and day
    assert found == expected
    assert all(
        hits == sum(found[(when, orjson.loads(key)[0])].values()) for when, key, hits, _ in stored
    )


def test_one_import_of_several_files_tallies_the_days_running_on_across_them_from_its_rows(
    engine: Engine, tmp_path: Path, now: datetime, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = expected_dashboard(engine, write(tmp_path / "all.log", lines), now)
    # Rotated inside a day, as logrotate does at 06:25: each day but the first and last runs on
    # from one file into the next.
    parts = [lines[:1_250], lines[1_250:2_250], lines[2_250:]]
    files = [write(tmp_path / f"access.log.{2 - n}", part) for n, part in enumerate(parts)]
    run = LogImport(engine, "combined", None, now=now)
    with monkeypatch.context() as patch:
        patch.setattr(daily, "raw_rows", no_reading_back)
        patch.setattr(rollups, "aggregate", no_reading_back)
        for path in files:
            run.add_file(path)
        assert run.finish().imported == LINES
    assert dashboard(engine, now) == expected == from_raw_rows(engine, now)

    # Rotations that overlap: the lines in both files are imported once.
    empty(engine)
    run = LogImport(engine, "combined", None, now=now)
    run.add_file(write(tmp_path / "older.log", lines[:1_600]))
    run.add_file(write(tmp_path / "newer.log", lines[1_400:]))
    result = run.finish()
    assert (result.imported, result.duplicates) == (LINES, 200)
    assert dashboard(engine, now) == expected == from_raw_rows(engine, now)


@pytest.mark.usefixtures("reading")
def test_imports_into_days_that_have_rows_and_out_of_order_give_the_raw_rows_dashboard(
    engine: Engine, tmp_path: Path, now: datetime, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = expected_dashboard(engine, write(tmp_path / "all.log", lines), now)

    # Half the lines first, then the other half into the days that now have rows.
    first = write(tmp_path / "first.log", lines[0::2])
    second = write(tmp_path / "second.log", lines[1::2])
    import_file(engine, first, "combined", None, now=now)
    assert rolled_days(engine) >= DAYS - 1
    import_file(engine, second, "combined", None, now=now)
    assert dashboard(engine, now) == expected == from_raw_rows(engine, now)
    again = import_file(engine, second, "combined", None, now=now)  # nothing new
    assert (again.imported, again.duplicates) == (0, len(lines[1::2]))
    assert dashboard(engine, now) == expected

    # Lines out of time order across days and batches.
    empty(engine)
    monkeypatch.setattr("alertstation.traffic.importer.BATCH", 500)
    shuffled = lines[:]
    random.Random(3).shuffle(shuffled)
    import_file(engine, write(tmp_path / "shuffled.log", shuffled), "combined", None, now=now)
    assert dashboard(engine, now) == expected == from_raw_rows(engine, now)


@pytest.mark.usefixtures("reading")
def test_a_late_line_of_a_day_already_tallied_leaves_that_day_to_the_raw_rows(
    engine: Engine, tmp_path: Path, now: datetime, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = expected_dashboard(engine, write(tmp_path / "all.log", lines), now)
    # Small batches, so the first day is tallied before its last line (moved to the end) comes.
    monkeypatch.setattr("alertstation.traffic.importer.BATCH", 100)
    late = [*lines[1:], lines[0]]
    import_file(engine, write(tmp_path / "late.log", late), "combined", None, now=now)
    assert dashboard(engine, now) == expected == from_raw_rows(engine, now)


@pytest.mark.usefixtures("reading")
def test_days_beyond_the_tallied_limit_are_read_back(
    engine: Engine, tmp_path: Path, now: datetime, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write(tmp_path / "all.log", lines)
    expected = expected_dashboard(engine, log, now)
    monkeypatch.setattr("alertstation.traffic.import_rollups.MAX_DAYS", 2)
    import_file(engine, log, "combined", None, now=now)
    assert rolled_days(engine) >= DAYS - 1
    assert dashboard(engine, now) == expected == from_raw_rows(engine, now)


def test_days_of_more_rows_than_a_chunk_are_read_back_a_batch_of_whole_visitors_at_a_time(
    engine: Engine, tmp_path: Path, now: datetime, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write(tmp_path / "all.log", lines)
    expected = expected_dashboard(engine, log, now)
    chunk = 97  # a day holds about LINES / DAYS = 500 rows
    monkeypatch.setattr(daily, "CHUNK_ROWS", chunk)
    monkeypatch.setattr(importer, "BATCH", 40)  # a day's rows come in several batches
    held = [0]  # the most rows of one day the import held at once
    add_all = import_rollups.RowTally.add_all

    def counted(self: import_rollups.RowTally, rows: list[tuple[Any, ...]]) -> None:
        add_all(self, rows)
        held[0] = max(held[0], *map(len, self.open.values()), 0)

    reads: list[list[list[str]]] = []  # per read: the visitor keys of each batch, in order
    batches = daily.visitor_batches

    def recorded(*args: Any) -> Any:
        reads.append([])
        for rows in batches(*args):
            reads[-1].append([row[0] for row in rows])
            yield rows

    monkeypatch.setattr(import_rollups.RowTally, "add_all", counted)
    monkeypatch.setattr(daily, "visitor_batches", recorded)
    import_file(engine, log, "combined", None, now=now)
    assert 0 < held[0] <= chunk
    assert len(reads) >= DAYS - 1  # every complete day read back
    assert dashboard(engine, now) == expected
    assert from_raw_rows(engine, now) == expected  # every day at once, live
    for read in reads:
        assert len(read) > 1 and all(len(keys) < 2 * chunk for keys in read)
        seen: set[str] = set()
        for keys in read:  # each visitor's rows together, in one batch
            runs = [key for number, key in enumerate(keys) if not number or keys[number - 1] != key]
            assert len(runs) == len(set(runs)) and seen.isdisjoint(runs)
            seen.update(runs)


def test_a_row_written_beside_the_import_into_a_tallied_day_is_counted(
    engine: Engine, now: datetime, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first_day = accesslog_moment(lines[0])
    beside = build_row(
        Observed(
            first_day + 60, "GET", "/beside", 200, 5.0, 321, "192.0.2.99", None, None, None, False
        ),
        None,
    )

    def write_beside() -> None:  # the recorder, say, flushing a late row mid-import
        nonlocal number
        number += 1
        if number == len(lines) // 2:
            with engine.begin() as conn:
                conn.execute(web_request_logs.insert().values(beside))

    number = 0
    monkeypatch.setattr("alertstation.traffic.importer.BATCH", 500)  # days checked early
    encoded = iter([line.encode() for line in lines])
    import_lines(engine, encoded, "combined", None, progress=write_beside, now=now)
    payload = dashboard(engine, now)
    assert payload["summary"]["hits"] == LINES + 1
    assert {"path": "/beside", "hits": 1, "visitors": 1, "bytes": 321} in payload["top_pages"]
    assert payload == from_raw_rows(engine, now)


def accesslog_moment(line: str) -> float:
    """The epoch second of a generated line."""
    seen = parse_combined(line)
    assert seen is not None
    return seen.ts


def test_the_import_runs_with_the_cyclic_collector_paused_and_resumes_it(
    engine: Engine, now: datetime, lines: list[str]
) -> None:
    seen: list[bool] = []
    result = import_lines(
        engine, iter(line.encode() for line in lines[:50]), "combined", None,
        progress=lambda: seen.append(gc.isenabled()), now=now,
    )  # fmt: skip
    assert result.imported == 50
    assert seen == [False] * 50
    assert gc.isenabled()


class _Recorded(import_rollups.RowTally):
    """A tally that records the days it would tally (their row counts), not their totals."""

    def _tally(self, day: int, rows: list[tuple[Any, ...]]) -> None:
        self.tallied[day] = len(rows)  # type: ignore[assignment]
        self.counts[day] = len(rows)


class _RowByRow(_Recorded):
    """The rule for one row at a time, against which ``add_all``'s runs are held."""

    def add_all(self, rows: list[tuple[Any, ...]]) -> None:
        for row in rows:
            day = int(row[1] // 86_400)
            held = self.open.get(day)
            if held is None:
                if day in self.left:
                    continue
                if day in self.tallied:
                    self.leave(day)
                    continue
                if len(self.open) + len(self.tallied) >= self.max_days:
                    self.left.add(day)
                    continue
                held = self.open[day] = []
            if len(held) >= self.chunk_rows:
                self.leave(day)
                continue
            self.batch_days.add(day)
            held.append(row)


def _states(tally: import_rollups.RowTally, batches: list[list[int]]) -> list[Any]:
    width = len(importer.ROW_COLUMNS)
    states = []
    for number, days in enumerate(batches):
        rows = [(None, day * 86_400.0 + number, *[None] * (width - 2)) for day in days]
        tally.add_all(rows)
        ended = tally.end_batch()
        states.append(
            (ended, {d: len(r) for d, r in tally.open.items()}, set(tally.left), tally.tallied)
        )
    tally.close()
    states.append((set(tally.left), dict(tally.tallied)))
    return states


@fuzz(300)
@given(
    st.lists(st.lists(st.integers(0, 5), max_size=12), max_size=8),
    st.integers(1, 6),
    st.integers(1, 4),
)
def test_a_batch_of_rows_is_held_or_left_as_its_rows_one_by_one(
    batches: list[list[int]], chunk: int, most_days: int
) -> None:
    # Most batches in time order, as a log comes; some with rows of days out of order.
    batches = [sorted(days) if len(days) % 3 else days for days in batches]
    tallies = []
    for kind in (_Recorded, _RowByRow):
        tally = kind()
        tally.chunk_rows, tally.max_days = chunk, most_days
        tallies.append(_states(tally, batches))
    assert tallies[0] == tallies[1]
