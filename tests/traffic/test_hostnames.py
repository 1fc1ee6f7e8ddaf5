"""Reverse DNS backfill: the spec's timeouts, no-record answers remembered, transient retried."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from alertstation.db.engine import begin_write
from alertstation.traffic import hostnames
from alertstation.traffic.hostnames import TransientLookupError, backfill, hostname_job
from alertstation.traffic.recorder import TrafficRecorder
from alertstation.traffic.rows import Observed
from alertstation.traffic.settings import TrafficSettingsCache, save_settings
from alertstation.traffic.tables import traffic_hostnames, web_request_logs
from alertstation.worker.jobs import JOBS
from tests.support import Clock
from tests.support import StationHarness as Station

pytestmark = pytest.mark.usefixtures("clean_log")


class Resolver:
    """Hand-made answers (DNS is an internet service): names, no records, failures."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, float]] = []
        self.names = {"192.0.2.1": "host.example.net", "2001:db8::5": None}
        self.failing = {"192.0.2.2"}

    def __call__(self, ip: str, timeout: float) -> str | None:
        self.asked.append((ip, timeout))
        if ip in self.failing:
            raise TransientLookupError(ip)
        return self.names[ip]


def store(engine: Engine, *ips: str) -> None:
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    now = Clock()().timestamp()
    for ip in ips:
        recorder.capture(Observed(now, "GET", "/", 200, 1.0, 10, ip, None, None, None, False))
    recorder.flush()


def names(engine: Engine) -> dict[str, str | None]:
    with engine.connect() as conn:
        query = select(web_request_logs.c.client_ip, web_request_logs.c.hostname)
        return dict(conn.execute(query).all())


def test_backfill_uses_the_timeouts_remembers_no_record_and_retries_failures(
    engine: Engine,
) -> None:
    store(engine, "192.0.2.1", "192.0.2.1", "2001:db8::5", "192.0.2.2", "198.51.100.0")
    resolver = Resolver()
    first = backfill(engine, resolver, Clock()())
    assert (first.found, first.no_record, first.failed) == (1, 1, 1)
    assert sorted(resolver.asked) == [
        ("192.0.2.1", 1.5),
        ("192.0.2.2", 1.5),
        ("2001:db8::5", 3.0),
    ]  # 198.51.100.0 is a masked address: never asked
    assert names(engine)["192.0.2.1"] == "host.example.net"
    assert names(engine)["2001:db8::5"] is None
    with engine.connect() as conn:
        query = select(traffic_hostnames.c.ip, traffic_hostnames.c.outcome)
        remembered = {row.ip: row.outcome for row in conn.execute(query)}
    assert remembered == {"192.0.2.1": "found", "2001:db8::5": "none"}

    resolver.asked.clear()
    resolver.failing.clear()
    resolver.names["192.0.2.2"] = "back.example.net"
    second = backfill(engine, resolver, Clock()())
    assert [ip for ip, _ in resolver.asked] == ["192.0.2.2"]  # only the failed one again
    assert second.found == 1 and names(engine)["192.0.2.2"] == "back.example.net"


def test_the_job_runs_every_ten_minutes_only_when_switched_on(
    station: Station, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert [job.interval for job in JOBS if job.run is hostname_job] == [600.0]
    store(station.engine, "192.0.2.1")
    resolver = Resolver()
    monkeypatch.setattr(hostnames, "system_resolver", resolver)
    hostname_job(station.app.station)
    assert resolver.asked == []
    with begin_write(station.engine) as conn:
        save_settings(conn, {"resolve_hostnames": True}, station.clock())
    hostname_job(station.app.station)
    assert resolver.asked == [("192.0.2.1", 1.5)]
