"""BulkInsert: ready tuples in, the same rows out as SQLAlchemy's own insert, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Boolean, Column, Engine, Integer, MetaData, String, Table, select
from sqlalchemy.dialects import postgresql, sqlite

from alertstation.db.bulk import BulkInsert, column_converter
from alertstation.db.types import UTCDateTime
from alertstation.traffic.rows import ROW_COLUMNS, Observed, build_row
from alertstation.traffic.tables import web_request_logs
from tests.fuzz.fuzzing import fuzz

NAMES = (*ROW_COLUMNS, "import_key")


def rows(first: int, count: int) -> list[tuple[object, ...]]:
    """Rows of ``count`` requests keyed ``k<first>`` on, with dates, booleans and None."""
    made = []
    for index in range(first, first + count):
        seen = Observed(
            ts=1_800_000_000.5 + index,
            method="GET",
            path=f"/p{index}",
            status=200,
            response_ms=None,
            content_length=index,
            client_ip="192.0.2.7",
            user_agent=None,
            referrer=None,
            accept_language="en-US",
            authenticated=index % 2 == 0,
            import_key=f"k{index}",
        )
        row = build_row(seen, None)
        made.append(tuple(row[name] for name in NAMES))
    return made


def stored(engine: Engine) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        query = select(*(web_request_logs.c[name] for name in NAMES)).order_by("import_key")
        return [tuple(row) for row in conn.execute(query)]


def test_both_ways_store_what_they_were_given_and_skip_taken_keys(engine: Engine) -> None:
    insert = BulkInsert(web_request_logs, NAMES, skip_conflicts_on="import_key")
    try:
        with engine.begin() as conn:
            assert insert.run(conn, rows(0, 5)) == 5
            assert insert.run_one_statement(conn, rows(3, 5)) == 3  # k3 and k4 are taken
            assert insert.run(conn, rows(6, 4)) == 2  # k6 and k7 are taken
            by_column = [list(column) for column in zip(*rows(9, 3), strict=True)]
            assert insert.run_columns(conn, by_column) == 2  # k9 is taken
            assert insert.run(conn, []) == 0 and insert.run_one_statement(conn, []) == 0
            assert insert.run_columns(conn, [[] for _ in NAMES]) == 0
            with pytest.raises(ValueError, match="rows of 2 values for 36 columns"):
                insert.run_columns(conn, by_column[:2])
        expected = sorted(rows(0, 12), key=lambda row: str(row[-1]))
        got = stored(engine)
        assert got == expected
        assert got[0][0] == datetime.fromtimestamp(1_800_000_000.5, UTC)
        assert got[0][NAMES.index("authenticated")] is True
    finally:
        with engine.begin() as conn:
            conn.execute(web_request_logs.delete())


def test_a_column_none_in_every_row_stores_null_even_when_it_has_a_default(engine: Engine) -> None:
    probe = Table(
        "bulk_insert_probe",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("plain", String(8), nullable=True),
        Column("defaulted", String(8), nullable=True, server_default="set"),
    )
    probe.create(engine)
    try:
        with engine.begin() as conn:
            insert = BulkInsert(probe, ("id", "plain", "defaulted"))
            assert insert.run(conn, [(1, None, None), (2, None, None)]) == 2
            assert insert.run(conn, [(3, "a", None), (4, None, "b")]) == 2
        with engine.connect() as conn:
            got = [tuple(row) for row in conn.execute(select(probe).order_by(probe.c.id))]
        assert got == [(1, None, None), (2, None, None), (3, "a", None), (4, None, "b")]
    finally:
        probe.drop(engine)


MOMENTS = st.datetimes(
    min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 30), timezones=st.sampled_from(
        [UTC, timezone(timedelta(hours=-5)), timezone(timedelta(minutes=345)), ZoneInfo("UTC")]
    ),
)  # fmt: skip


@fuzz(300)
@given(values=st.lists(st.none() | MOMENTS | st.datetimes(), max_size=20))
def test_sqlite_moment_shortcut_gives_the_processors_text(values: list[datetime | None]) -> None:
    dialect = sqlite.dialect()
    processor = UTCDateTime()._cached_bind_processor(dialect)
    assert processor is not None
    convert = column_converter(UTCDateTime(), dialect, processor)
    assert list(convert(values)) == [processor(value) for value in values]


@pytest.mark.parametrize(
    "values", [[True, False, None], [], [None], [1, 0, True], [False, 2], [True, "x"]]
)
def test_sqlite_boolean_shortcut_stores_what_the_processor_would(values: list[object]) -> None:
    dialect = sqlite.dialect()
    processor = Boolean()._cached_bind_processor(dialect)
    assert processor is not None
    convert = column_converter(Boolean(), dialect, processor)
    try:
        expected: object = [processor(value) for value in values]
    except (TypeError, ValueError) as ex:
        expected = type(ex)
    try:
        got: object = [None if v is None else int(v) for v in convert(values)]
    except (TypeError, ValueError) as ex:
        got = type(ex)
    assert got == expected  # sqlite3 binds True/False as 1/0


def test_other_dialects_map_the_processor() -> None:
    dialect = postgresql.dialect()
    calls: list[object] = []
    convert = column_converter(Boolean(), dialect, lambda value: calls.append(value) or value)
    assert list(convert([True, None])) == [True, None] and calls == [True, None]
