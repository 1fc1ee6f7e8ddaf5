"""Traffic anomalies over the last hour, with thresholds from the settings.

Five kinds: ``error_rate`` (share of answers ≥ 400 at or over ``anomaly_error_rate_pct``, once
at least ``MIN_HITS`` requests came in), ``5xx_surge`` (server errors at or over
``anomaly_5xx_threshold``), ``scanner`` (one address given at least ``anomaly_scanner_threshold``
4xx answers: a likely vulnerability scanner), ``login_brute_force`` (one address failing sign-in
at least ``anomaly_failed_login_threshold`` times) and ``traffic_spike`` (hits at least
``anomaly_spike_factor`` times the hourly mean of the 24 hours before, and at least
``MIN_HITS``). Reported only; nothing here touches the EAS broadcast pipeline.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, case, func, select

from alertstation.traffic.reports import LOGIN_PATH
from alertstation.traffic.settings import TrafficSettings
from alertstation.traffic.tables import HOUR_SECONDS
from alertstation.traffic.tables import web_request_logs as t

WINDOW_SECONDS = HOUR_SECONDS
BASELINE_HOURS = 24
MIN_HITS = 20
MAX_PER_KIND = 20


def _per_address(conn: Connection, where: Any, threshold: int) -> list[tuple[str, int]]:
    count = func.count().label("n")
    query = (
        select(t.c.client_ip, count)
        .where(where)
        .group_by(t.c.client_ip)
        .having(func.count() >= threshold)
        .order_by(count.desc(), t.c.client_ip)
        .limit(MAX_PER_KIND)
    )
    return [(ip, int(n)) for ip, n in conn.execute(query)]


def detect(conn: Connection, settings: TrafficSettings, now: datetime) -> list[dict[str, Any]]:
    """Return the anomalies of the hour before ``now`` (none when detection is off)."""
    if not settings.anomaly_detection_enabled:
        return []
    end = now.timestamp()
    start = end - WINDOW_SECONDS
    window = and_(t.c.ts >= start, t.c.ts < end)
    hits, errors, server_errors = conn.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((t.c.status >= 400, 1), else_=0)), 0),
            func.coalesce(func.sum(case((t.c.status >= 500, 1), else_=0)), 0),
        ).where(window)
    ).one()
    hits, errors, server_errors = int(hits), int(errors), int(server_errors)
    found: list[dict[str, Any]] = []
    rate = 100.0 * errors / hits if hits else 0.0
    if hits >= MIN_HITS and rate >= settings.anomaly_error_rate_pct:
        found.append(
            _anomaly(
                "error_rate",
                f"{rate:.1f}% of {hits} requests failed",
                round(rate, 1),
                settings.anomaly_error_rate_pct,
            )
        )
    if server_errors >= settings.anomaly_5xx_threshold:
        found.append(
            _anomaly(
                "5xx_surge",
                f"{server_errors} server errors",
                server_errors,
                settings.anomaly_5xx_threshold,
            )
        )
    four = and_(window, t.c.status.between(400, 499))
    for ip, count in _per_address(conn, four, settings.anomaly_scanner_threshold):
        found.append(
            _anomaly(
                "scanner",
                f"{ip} was answered 4xx {count} times: a likely vulnerability scanner",
                count,
                settings.anomaly_scanner_threshold,
                ip,
            )
        )
    logins = and_(window, t.c.method == "POST", t.c.path == LOGIN_PATH, t.c.status >= 400)
    for ip, count in _per_address(conn, logins, settings.anomaly_failed_login_threshold):
        found.append(
            _anomaly(
                "login_brute_force",
                f"{ip} failed to sign in {count} times",
                count,
                settings.anomaly_failed_login_threshold,
                ip,
            )
        )
    baseline_start = start - BASELINE_HOURS * HOUR_SECONDS
    before = conn.execute(
        select(func.count()).where(t.c.ts >= baseline_start, t.c.ts < start)
    ).scalar_one()
    usual = int(before) / BASELINE_HOURS
    if hits >= MIN_HITS and hits >= settings.anomaly_spike_factor * max(usual, 1.0):
        found.append(
            _anomaly(
                "traffic_spike",
                f"{hits} requests in the last hour; usually {usual:.1f}",
                hits,
                round(settings.anomaly_spike_factor * max(usual, 1.0), 1),
            )
        )
    return found


def _anomaly(
    kind: str, message: str, value: float, threshold: float, ip: str | None = None
) -> dict[str, Any]:
    anomaly: dict[str, Any] = {
        "kind": kind,
        "message": message,
        "value": value,
        "threshold": threshold,
        "window_seconds": WINDOW_SECONDS,
    }
    if ip is not None:
        anomaly["ip"] = ip
    return anomaly
