"""Anomalies from the settings' thresholds; the privacy tools: access, audit, and their effect."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, select

from alertstation.audit.tables import audit_logs
from alertstation.traffic import rollups
from alertstation.traffic.anomalies import detect
from alertstation.traffic.recorder import TrafficRecorder
from alertstation.traffic.rows import Observed
from alertstation.traffic.settings import TrafficSettings, TrafficSettingsCache
from alertstation.traffic.tables import (
    traffic_analytics_settings,
    traffic_hostnames,
    traffic_visitors,
    web_request_logs,
)
from tests.support import Clock, SignedIn
from tests.support import StationHarness as Station

pytestmark = pytest.mark.usefixtures("clean_log")
Rows = Callable[[], list[dict[str, Any]]]


def request(ts: float, ip: str, path: str = "/alerts", status: int = 200, method: str = "GET"):
    return Observed(ts, method, path, status, 2.0, 100, ip, None, None, None, False)


def store(engine: Engine, observed: list[Observed]) -> None:
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    for seen in observed:
        recorder.capture(seen)
    recorder.flush()


def kinds(found: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return sorted((item["kind"], item.get("ip")) for item in found)


def test_each_kind_of_anomaly_follows_its_threshold(engine: Engine) -> None:
    clock = Clock()
    now = clock().timestamp()
    quiet = [request(now - 7200 - 60 * n, f"192.0.2.{n % 5}") for n in range(24)]  # 1/hour usual
    scanner = [request(now - 60 - n, "198.51.100.66", f"/wp-{n}.php", 404) for n in range(6)]
    brute = [request(now - 120 - n, "198.51.100.77", "/auth/login", 401, "POST") for n in range(4)]
    broken = [request(now - 300 - n, "192.0.2.9", "/alerts", 500) for n in range(3)]
    fine = [request(now - 400 - n, "192.0.2.10") for n in range(12)]
    store(engine, quiet + scanner + brute + broken + fine)
    # 25 hits in the hour: 13 errors (52%), 3 server errors, 6 x 4xx from one address,
    # 4 failed sign-ins from one, 25 against a usual 1 an hour.
    strict = TrafficSettings(
        anomaly_error_rate_pct=50.0,
        anomaly_5xx_threshold=3,
        anomaly_scanner_threshold=6,
        anomaly_failed_login_threshold=4,
        anomaly_spike_factor=20.0,
    )
    lenient = TrafficSettings(
        anomaly_error_rate_pct=60.0,
        anomaly_5xx_threshold=4,
        anomaly_scanner_threshold=7,
        anomaly_failed_login_threshold=5,
        anomaly_spike_factor=30.0,
    )
    with engine.connect() as conn:
        assert kinds(detect(conn, strict, clock())) == [
            ("5xx_surge", None),
            ("error_rate", None),
            ("login_brute_force", "198.51.100.77"),
            ("scanner", "198.51.100.66"),
            ("traffic_spike", None),
        ]
        assert detect(conn, lenient, clock()) == []
        off = TrafficSettings(anomaly_detection_enabled=False, anomaly_5xx_threshold=1)
        assert detect(conn, off, clock()) == []


def test_anomalies_route_and_dashboard_payload(station: Station, admin: SignedIn) -> None:
    now = station.clock().timestamp()
    store(station.engine, [request(now - 10 - n, "192.0.2.1", "/x", 503) for n in range(10)])
    result = admin.request("GET", "/api/traffic/anomalies")
    assert result.status_code == 200
    assert [item["kind"] for item in result.json["anomalies"]] == ["5xx_surge"]
    assert station.client.simulate_get("/api/traffic/anomalies").status_code == 401
    dashboard = admin.request("GET", "/api/traffic/dashboard", params={"days": "1"}).json
    assert dashboard["anomalies"] == result.json["anomalies"]


def audit_rows(engine: Engine) -> list[Any]:
    query = select(audit_logs).where(audit_logs.c.action.like("traffic.%"))
    with engine.connect() as conn:
        return list(conn.execute(query.order_by(audit_logs.c.id)))


def test_privacy_tools_need_configure_are_audited_and_keep_rollups_honest(
    station: Station, admin: SignedIn, engine: Engine
) -> None:
    clock = station.clock
    now = clock().timestamp()
    store(
        engine,
        [
            request(now - 7200, "203.0.113.5"),
            request(now - 3 * 3600, "203.0.113.5"),
            request(now - 7200, "2001:db8:5:6::7"),
            request(now - 60, "192.0.2.1"),
        ],
    )
    with engine.begin() as conn:
        conn.execute(
            traffic_analytics_settings.insert().values(
                id=1,
                **{**TrafficSettings().as_dict(), "skip_paths": "", "site_hosts": ""},
                updated_at=clock(),
            )
        )
    rollups.ensure_rolled_up(engine, clock())
    with engine.begin() as conn:
        conn.execute(
            traffic_hostnames.insert().values(
                ip="203.0.113.5", hostname="five.example.net", outcome="found", checked_at=clock()
            )
        )

    def hits() -> dict[str, int]:
        # Two UTC days: the rows of two and three hours ago fall on yesterday before 03:00 UTC.
        summary = admin.request("GET", "/api/traffic/dashboard", params={"days": "2"}).json[
            "summary"
        ]
        return {"hits": summary["hits"], "visitors": summary["unique_visitors"]}

    assert hits() == {"hits": 4, "visitors": 3}
    station.add_user("eve", "viewer")
    viewer = station.sign_in("eve")
    for path in ("/api/traffic/privacy/purge", "/api/traffic/privacy/anonymize"):
        assert viewer.request("POST", path, json={"ip": "203.0.113.5"}).status_code == 403
    assert viewer.request("POST", "/api/traffic/purge-all").status_code == 403
    bad = admin.request("POST", "/api/traffic/privacy/purge", json={"ip": "not-an-ip"})
    assert bad.status_code == 422

    anonymized = admin.request(
        "POST", "/api/traffic/privacy/anonymize", json={"ip": "2001:db8:5:6::7"}
    )
    assert anonymized.json == {"rows": 1}
    purged = admin.request("POST", "/api/traffic/privacy/purge", json={"ip": "203.0.113.5"})
    assert purged.json == {"rows": 2}
    assert hits() == {"hits": 2, "visitors": 2}
    with engine.connect() as conn:
        ips = sorted(conn.execute(select(web_request_logs.c.client_ip)).scalars())
        keys = set(conn.execute(select(traffic_visitors.c.visitor_key)).scalars())
    assert ips == ["192.0.2.1", "2001:db8:5::"]
    assert "203.0.113.5" not in keys and "2001:db8:5:6::/64" not in keys
    with engine.connect() as conn:
        assert conn.execute(select(traffic_hostnames.c.ip)).all() == []  # its name forgotten

    assert admin.request("POST", "/api/traffic/purge-all").json == {"rows": 2}
    assert hits() == {"hits": 0, "visitors": 0}
    with engine.connect() as conn:
        assert conn.execute(select(traffic_analytics_settings.c.id)).scalar() == 1  # kept
    actions = [(row.action, orjson.loads(row.details)) for row in audit_rows(engine)]
    assert actions == [
        ("traffic.ip_anonymized", {"rows": 1}),
        ("traffic.ip_purged", {"rows": 2}),
        ("traffic.purged_all", {"rows": 2}),
    ]
    assert all("203.0.113.5" not in (row.details or "") for row in audit_rows(engine))


def test_the_client_beacon_records_the_screen_once_per_session(
    station: Station, logged: Rows
) -> None:
    visitor = "203.0.113.40"
    station.client.simulate_get("/healthz", remote_addr=visitor)  # the page, still buffered
    station.client.simulate_get("/healthz", remote_addr="203.0.113.41")  # someone else
    bad = station.client.simulate_get(
        "/api/traffic/client", params={"screen": "huge"}, remote_addr=visitor
    )
    assert bad.status_code == 422
    trailing = station.client.simulate_get(
        "/api/traffic/client", query_string="screen=1920x1080%0A", remote_addr=visitor
    )
    assert trailing.status_code == 422, "a trailing newline is not part of WIDTHxHEIGHT"
    sent = station.client.simulate_get(
        "/api/traffic/client", params={"screen": "1920x1080"}, remote_addr=visitor
    )
    assert sent.status_code == 204
    assert sent.cookies["as_screen"].value == "1"
    station.client.simulate_get("/healthz", remote_addr=visitor)
    again = station.client.simulate_get(
        "/api/traffic/client",
        params={"screen": "800x600"},
        remote_addr=visitor,
        cookies={"as_screen": "1"},
    )
    assert again.status_code == 204
    assert [(row["client_ip"], row["screen_resolution"]) for row in logged()] == [
        (visitor, "1920x1080"),
        ("203.0.113.41", None),
        (visitor, None),  # the session already sent its resolution
    ]
