"""One address's rows, found through the request log's index on time and address."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.sql import Executable

from alertstation.traffic.address_rows import first_time, of_ip
from alertstation.traffic.recorder import TrafficRecorder
from alertstation.traffic.rows import Observed
from alertstation.traffic.settings import TrafficSettingsCache
from alertstation.traffic.tables import web_request_logs as t
from tests.support import Clock

pytestmark = pytest.mark.usefixtures("clean_log")
INDEX = "ix_web_request_logs_ts_client_ip"


def store(engine: Engine, requests: list[tuple[float, str]]) -> None:
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    for ts, ip in requests:
        recorder.capture(Observed(ts, "GET", "/alerts", 200, 2.0, 100, ip, None, None, None, False))
    recorder.flush()


def test_an_address_has_its_first_time_and_its_rows_from_it(engine: Engine) -> None:
    start = Clock()().timestamp() - 86_400
    store(
        engine,
        [
            (start, "192.0.2.1"),
            (start + 100, "2001:db8::7"),
            (start + 200, "192.0.2.1"),
            (start + 5_000, "2001:db8::7"),
            (start + 6_000, "192.0.2.10"),
        ],
    )
    with engine.connect() as conn:
        first = first_time(conn, "2001:db8::7")
        assert first == start + 100
        assert first_time(conn, "192.0.2.1") == start
        assert first_time(conn, "192.0.2.2") is None  # no rows
        found = conn.execute(select(t.c.ts).where(of_ip("2001:db8::7", first)).order_by(t.c.ts))
        assert found.scalars().all() == [start + 100, start + 5_000]
        later = conn.execute(select(t.c.ts).where(of_ip("192.0.2.1", start + 1)))
        assert later.scalars().all() == [start + 200]  # from the time given on


def plan(engine: Engine, statement: Executable) -> list[str]:
    sql = statement.compile(dialect=engine.dialect, compile_kwargs={"literal_binds": True})
    with engine.connect() as conn:
        return [row[3] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}")]


def test_sqlite_reads_an_address_from_the_index_never_the_whole_table(engine: Engine) -> None:
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's query plans")
    first = select(func.min(t.c.ts)).where(t.c.client_ip == "192.0.2.1")  # as first_time reads
    rows = select(t.c.id).where(of_ip("192.0.2.1", 1.0))
    for statement in (first, rows, t.delete().where(of_ip("192.0.2.1", 1.0))):
        steps = plan(engine, statement)
        assert steps and all(INDEX in step for step in steps), steps
