"""Hourly rollups: stored once per complete hour, unions of visitor bitmaps, invalidated by late
rows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from alertstation.db.engine import begin_write
from alertstation.traffic import daily, reports, rollups
from alertstation.traffic.maintenance import prune
from alertstation.traffic.period import Filters, Period, parse_period
from alertstation.traffic.recorder import TrafficRecorder
from alertstation.traffic.rows import Observed
from alertstation.traffic.settings import TrafficSettingsCache
from alertstation.traffic.tables import (
    traffic_visitors,
    web_request_days,
    web_request_logs,
    web_request_rollups,
)
from tests.support import Clock
from tests.traffic import oracle

pytestmark = pytest.mark.usefixtures("clean_log")


def seen(ts: float, ip: str, path: str = "/alerts") -> Observed:
    return Observed(ts, "GET", path, 200, 2.0, 100, ip, None, None, None, False)


def test_rollups_count_each_visitor_once_and_follow_late_rows(engine: Engine) -> None:
    clock = Clock()
    now = clock().timestamp()
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    for hours_ago, ip in (
        (30, "192.0.2.1"),
        (29, "192.0.2.1"),
        (29, "192.0.2.2"),
        (3, "192.0.2.3"),
    ):
        recorder.capture(seen(now - hours_ago * 3600, ip))
    recorder.capture(seen(now, "192.0.2.1"))  # the current hour: read from raw rows
    assert recorder.flush() == 5
    assert rollups.ensure_rolled_up(engine, clock()) == 30  # hours 30 ago .. the last complete one
    assert rollups.ensure_rolled_up(engine, clock()) == 0  # nothing new: no write
    period = Period(clock().date() - timedelta(days=2), clock().date())
    with engine.connect() as conn:
        first = reports.summary(conn, period, Filters())
        newest = rollups.newest_rolled(conn)
    assert (first["hits"], first["unique_visitors"], first["bandwidth_bytes"]) == (5, 3, 500)
    assert newest == rollups.hour_of(clock()) - 1

    recorder.capture(seen(now - 20 * 3600, "192.0.2.9"))  # late: an hour already rolled up
    recorder.flush()
    with engine.connect() as conn:
        assert rollups.newest_rolled(conn) == rollups.hour_of(clock()) - 21
        late = reports.summary(conn, period, Filters())
    assert (late["hits"], late["unique_visitors"]) == (6, 4)
    rollups.ensure_rolled_up(engine, clock())
    with engine.connect() as conn:
        assert reports.summary(conn, period, Filters()) == late


def test_reading_live_hours_writes_no_visitor_ids(engine: Engine) -> None:
    clock = Clock()
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    recorder.capture(seen(clock().timestamp(), "192.0.2.1"))
    recorder.capture(seen(clock().timestamp(), "2001:db8::1"))
    recorder.flush()
    period = Period(clock().date(), clock().date())
    with engine.connect() as conn:
        summary = reports.summary(conn, period, Filters())
        assert conn.execute(select(func.count()).select_from(traffic_visitors)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(web_request_rollups)).scalar_one() == 0
    assert summary["unique_visitors"] == 2


def test_rolled_up_days_give_the_dashboard_the_raw_rows_give_and_follow_changes(
    engine: Engine,
) -> None:
    clock = Clock()
    rows = oracle.generate(clock())
    with engine.begin() as conn:
        for start in range(0, len(rows), 200):
            conn.execute(web_request_logs.insert().values(rows[start : start + 200]))
    period = parse_period({"days": "10"}, clock().date())

    def unfiltered() -> dict[str, Any]:
        with engine.connect() as conn:
            return reports.dashboard(conn, period, Filters(), limit=10_000)

    from_raw_rows = unfiltered()  # nothing rolled up yet: every day read from raw rows
    rollups.ensure_rolled_up(engine, clock())
    today = int(clock().timestamp() // 86_400)
    with engine.connect() as conn:
        assert daily.newest_day(conn) == today - 1
        stored_days = conn.execute(select(func.count()).select_from(web_request_days)).scalar()
    # Rows cover the 20 days before now: 19 whole days, and the 20th only from now's time of day
    # to its midnight, which late in the UTC day may hold no row at all.
    assert stored_days and stored_days >= 19
    assert unfiltered() == from_raw_rows

    # A late request into a day already rolled up: that day and the later ones are dropped.
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    recorder.capture(seen(clock().timestamp() - 3 * 86_400, "192.0.2.250", "/late"))
    recorder.flush()
    with engine.connect() as conn:
        assert daily.newest_day(conn) == today - 4
    late = unfiltered()
    assert late["summary"]["hits"] == from_raw_rows["summary"]["hits"] + 1
    assert late["summary"]["visits"] == from_raw_rows["summary"]["visits"] + 1
    assert {"visitor_key": "192.0.2.250", "hits": 1, "visitors": 1, "bytes": 100} in late[
        "top_visitors"
    ]
    rollups.ensure_rolled_up(engine, clock())
    assert unfiltered() == late

    # Pruning drops the days whose rows go.
    with begin_write(engine) as conn:
        prune(conn, clock(), retention_days=5)
        oldest = conn.execute(select(func.min(web_request_days.c.day))).scalar()
    assert oldest is not None and oldest >= today - 5


def test_a_long_period_sums_its_lists_from_the_sums_index_as_a_short_one_does(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    rows = oracle.generate(clock())
    with engine.begin() as conn:
        for start in range(0, len(rows), 200):
            conn.execute(web_request_logs.insert().values(rows[start : start + 200]))

    def unfiltered(days: str) -> dict[str, Any]:
        with engine.connect() as conn:
            period = parse_period({"days": days}, clock().date())
            return reports.dashboard(conn, period, Filters(), limit=10_000)

    from_raw_rows = {days: unfiltered(days) for days in ("3", "10", "30")}
    rollups.ensure_rolled_up(engine, clock())
    for share in (0, 10_000):  # every period short (read by day), then every period long
        monkeypatch.setattr(daily, "LONG_SHARE", share)
        assert {days: unfiltered(days) for days in from_raw_rows} == from_raw_rows
    if engine.dialect.name != "sqlite":
        return
    today = int(clock().timestamp() // 86_400)
    query = daily.sums_query(today - 30, today - 1, long=True)
    sql = str(query.compile(engine, compile_kwargs={"literal_binds": True}))
    with engine.connect() as conn:
        plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql))
    # Summed as the index is scanned: no sort of the rows for the grouping.
    assert "COVERING INDEX ix_web_request_day_groups_sums" in plan
    assert "TEMP B-TREE" not in plan
