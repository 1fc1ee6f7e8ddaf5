"""Pruning past the retention days (the worker's hourly job) and the opt-in dashboard cache."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine, func, select

from alertstation.db.engine import begin_write
from alertstation.traffic import rollups
from alertstation.traffic.cache import DashboardCache
from alertstation.traffic.maintenance import JOB_INTERVAL, maintain, traffic_job
from alertstation.traffic.recorder import TrafficRecorder
from alertstation.traffic.rows import Observed
from alertstation.traffic.settings import TrafficSettingsCache, save_settings
from alertstation.traffic.tables import web_request_logs, web_request_rollups
from alertstation.worker.jobs import JOBS
from tests.support import Clock, SignedIn
from tests.support import StationHarness as Station

pytestmark = pytest.mark.usefixtures("clean_log")


def seen(ts: float, ip: str = "192.0.2.1") -> Observed:
    return Observed(ts, "GET", "/alerts", 200, 2.0, 100, ip, None, None, None, False)


def count(engine: Engine, table: object) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def test_the_worker_prunes_hourly_past_the_retention_days(engine: Engine) -> None:
    assert [job.interval for job in JOBS if job.run is traffic_job] == [JOB_INTERVAL] == [3600.0]
    clock = Clock()
    with begin_write(engine) as conn:
        save_settings(conn, {"retention_days": 3}, clock())
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    now = clock().timestamp()
    for days_ago in (5, 4, 3.1, 2.9, 1, 0):
        recorder.capture(seen(now - days_ago * 86_400))
    recorder.flush()
    rollups.ensure_rolled_up(engine, clock())
    assert maintain(engine, clock()) == 3
    with engine.connect() as conn:
        kept = sorted(conn.execute(select(web_request_logs.c.ts)).scalars())
        oldest_rollup = conn.execute(select(func.min(web_request_rollups.c.hour))).scalar()
    assert kept == [now - days * 86_400 for days in (2.9, 1, 0)]
    assert oldest_rollup == rollups.hour_of(clock() - timedelta(days=3))
    clock.advance(days=1)
    assert maintain(engine, clock()) == 1


def test_the_dashboard_cache_is_opt_in_and_cleared_when_rows_change(
    station: Station, admin: SignedIn
) -> None:
    path = "/api/traffic/dashboard"
    resource = station.app.registry.lookup(path, "GET").resource
    cache: DashboardCache = resource.cache
    outside = "198.51.100.30"

    def hits() -> int:
        result = admin.request("GET", path, params={"days": "1"})
        assert result.status_code == 200
        return int(result.json["summary"]["hits"])

    station.client.simulate_get("/healthz", remote_addr=outside)
    station.app.traffic.flush()
    assert hits() == 1
    assert cache._entries == {}  # off by default
    assert admin.request("PUT", "/api/traffic/settings", json={"dashboard_cache": True}).json[
        "changed"
    ] == ["dashboard_cache"]
    assert hits() == 1
    assert len(cache._entries) == 1
    [(key, (expires, token, payload))] = cache._entries.items()
    cache._entries[key] = (expires, token, {**payload, "summary": {"hits": 99}})
    assert hits() == 99  # served from the cache
    station.client.simulate_get("/healthz", remote_addr=outside)
    station.app.traffic.flush()
    assert hits() == 2  # a new row: the entry no longer applies


def test_cache_entries_expire_after_thirty_seconds() -> None:
    now = [0.0]
    cache = DashboardCache(monotonic=lambda: now[0])
    cache.put("k", 1, {"x": 1})
    now[0] = 29.9
    assert cache.get("k", 1) == {"x": 1}
    assert cache.get("k", 2) is None  # another token
    cache.put("k", 1, {"x": 1})
    now[0] = 29.9 + 30.0
    assert cache.get("k", 1) is None
