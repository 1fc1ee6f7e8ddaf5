"""Engine settings and the UTC timestamp type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, insert, select, text

from alertstation.db import make_engine
from alertstation.db.types import UTCDateTime


def test_sqlite_pragmas(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'nested' / 'x.db'}")
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 5000
    engine.dispose()


def test_unsupported_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported database backend"):
        make_engine("mysql://x@localhost/db")


def test_utc_datetime_round_trip(engine) -> None:  # type: ignore[no-untyped-def]
    table = Table(
        "tz_probe", MetaData(), Column("id", Integer, primary_key=True), Column("at", UTCDateTime)
    )
    table.create(engine)
    try:
        eastern = timezone(timedelta(hours=-5))
        with engine.begin() as conn:
            conn.execute(
                insert(table),
                [
                    {"id": 1, "at": datetime(2026, 1, 1, 7, 0, tzinfo=eastern)},
                    {"id": 2, "at": datetime(2026, 1, 1, 12, 0)},  # naive: taken as UTC
                ],
            )
            rows = dict(conn.execute(select(table.c.id, table.c.at)).all())
        assert rows[1] == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        assert rows[2] == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        assert rows[1].tzinfo is not None and rows[1].utcoffset() == timedelta(0)
    finally:
        table.drop(engine)
