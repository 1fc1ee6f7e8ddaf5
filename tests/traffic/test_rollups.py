"""Hourly rollups: stored once per complete hour, unions of visitor bitmaps, invalidated by late
rows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine, func, select

from alertstation.traffic import reports, rollups
from alertstation.traffic.period import Filters, Period
from alertstation.traffic.recorder import TrafficRecorder
from alertstation.traffic.rows import Observed
from alertstation.traffic.settings import TrafficSettingsCache
from alertstation.traffic.tables import traffic_visitors, web_request_rollups
from tests.support import Clock

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
