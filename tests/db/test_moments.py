"""Moments given as seconds since the epoch (``db.moments``), and stored from them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, select
from sqlalchemy.dialects import postgresql, sqlite

from alertstation.db.bulk import BulkInsert, column_converter
from alertstation.db.moments import EpochSeconds, Moments, SqliteTexts, sqlite_text
from alertstation.db.types import UTCDateTime
from alertstation.traffic.tables import web_request_logs
from alertstation.traffic.timestamps import END_TIME, FIRST_TIME
from tests.db.test_bulk import NAMES, rows, stored
from tests.fuzz.fuzzing import fuzz

BASE = 1_790_000_000  # 2026-09-21 14:13:20 UTC, 20 s into its minute
TIMES = [BASE, BASE + 1, BASE + 39, BASE + 40, BASE + 0.25, BASE + 61.5, 0, END_TIME - 1]
STORABLE = st.one_of(
    st.integers(int(FIRST_TIME), int(END_TIME) - 1).map(float),
    st.floats(FIRST_TIME, END_TIME, exclude_max=True),
)


def sqlite_processor_text(ts: float) -> str:
    processor = UTCDateTime()._cached_bind_processor(sqlite.dialect())
    assert processor is not None
    return str(processor(datetime.fromtimestamp(ts, UTC)))


def test_whole_and_fractional_seconds_give_the_moment_and_text_of_their_time() -> None:
    moments, texts = Moments(), SqliteTexts()
    for ts in TIMES * 2:  # the second time round from the minutes remembered
        assert moments(ts) == datetime.fromtimestamp(ts, UTC) and moments(ts).tzinfo is UTC
        assert texts(ts) == sqlite_processor_text(ts)
    assert texts(BASE) == "2026-09-21 14:13:20.000000"
    assert texts(BASE + 61.5) == "2026-09-21 14:14:21.500000"
    assert sqlite_text(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01 00:00:00.000000"


@pytest.mark.parametrize("made", [Moments, SqliteTexts])
def test_the_memory_of_minutes_starts_anew_when_full(
    made: type[Moments] | type[SqliteTexts], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(made, "MINUTES", 2)
    each = made()
    for ts in range(0, 60 * 10, 7):
        moment = each(ts)
        assert moment == (
            datetime.fromtimestamp(ts, UTC) if made is Moments else sqlite_processor_text(ts)
        )
    assert len(each._minutes) <= 2


@fuzz(200)
@given(times=st.lists(STORABLE, max_size=20))
def test_any_storable_time_gives_datetimes_moment_and_the_processors_text(
    times: list[float],
) -> None:
    moments, texts = Moments(), SqliteTexts()
    for ts in times:
        assert moments(ts) == datetime.fromtimestamp(ts, UTC)
        assert texts(ts) == sqlite_processor_text(ts)


@pytest.mark.parametrize("dialect", [sqlite.dialect(), postgresql.dialect()])
def test_a_column_of_epoch_seconds_converts_as_its_moments_would(dialect: object) -> None:
    processor = UTCDateTime()._cached_bind_processor(dialect)  # type: ignore[arg-type]
    assert processor is not None
    convert = column_converter(UTCDateTime(), dialect, processor)  # type: ignore[arg-type]
    moments = [datetime.fromtimestamp(ts, UTC) for ts in TIMES]
    assert list(convert(EpochSeconds(TIMES))) == list(convert(moments))
    assert list(convert(EpochSeconds())) == []


def test_rows_given_their_moments_as_epoch_seconds_store_the_same(engine: Engine) -> None:
    insert = BulkInsert(web_request_logs, NAMES)
    by_column: list[list[object]] = [list(column) for column in zip(*rows(0, 6), strict=True)]
    times = [1_800_000_000.0, 1_800_000_001.0, 1_800_000_061.0, *by_column[1][3:]]  # then x.5 s
    by_column[0], by_column[1] = EpochSeconds(times), list(times)  # type: ignore[arg-type]
    try:
        with engine.begin() as conn:
            assert insert.run_columns(conn, by_column) == 6
        expected = [
            (datetime.fromtimestamp(row[1], UTC), *row[1:])  # type: ignore[arg-type]
            for row in zip(*by_column, strict=True)
        ]
        assert stored(engine) == expected
        with engine.connect() as conn:
            found = conn.execute(select(web_request_logs.c.occurred_at)).scalars().all()
        assert all(moment.tzinfo is UTC for moment in found)
    finally:
        with engine.begin() as conn:
            conn.execute(web_request_logs.delete())
