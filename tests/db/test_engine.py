"""Engine settings and the UTC timestamp type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, Table, insert, select, text

from alertstation.db import make_engine
from alertstation.db.engine import POSTGRESQL_CONNECT_ARGS
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


def test_postgresql_connections_carry_keepalives_and_a_user_timeout(engine: Engine) -> None:
    """A host whose link is cut learns it in seconds (libpq keepalives, TCP user timeout), and a
    value written in DATABASE_URL wins over the station's default."""
    if engine.dialect.name != "postgresql":
        return  # SQLite has no network link
    url = engine.url.render_as_string(hide_password=False)
    station_engine = make_engine(url)
    chosen = make_engine(url + ("&" if "?" in url else "?") + "keepalives_idle=30")
    try:
        with station_engine.connect() as conn:
            sent = conn.connection.dbapi_connection.info.get_parameters()  # type: ignore[union-attr]
        assert {name: sent.get(name) for name in POSTGRESQL_CONNECT_ARGS} == {
            name: str(value) for name, value in POSTGRESQL_CONNECT_ARGS.items()
        }
        with chosen.connect() as conn:
            sent = conn.connection.dbapi_connection.info.get_parameters()  # type: ignore[union-attr]
        assert sent["keepalives_idle"] == "30" and sent["tcp_user_timeout"] == "10000"
    finally:
        station_engine.dispose()
        chosen.dispose()
