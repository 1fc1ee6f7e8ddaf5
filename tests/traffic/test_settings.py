"""Traffic analytics settings: defaults, access, validation, the config.updated row, storage."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from sqlalchemy import Connection, Engine, select

from alertstation.audit.tables import audit_logs
from alertstation.errors import Invalid
from alertstation.traffic.settings import (
    FIELD_NAMES,
    TrafficSettings,
    load_settings,
    save_settings,
)
from tests.support import SignedIn
from tests.support import StationHarness as Station

pytestmark = pytest.mark.usefixtures("clean_log")

PATH = "/api/traffic/settings"
SPEC_SETTINGS = {
    "enabled",
    "retention_days",
    "log_api_requests",
    "authenticated_only",
    "exclude_bots",
    "geoip_database_path",
    "geoip_asn_database_path",
    "resolve_hostnames",
    "exclude_internal",
    "skip_paths",
    "anonymize_ip",
    "anomaly_detection_enabled",
    "anomaly_error_rate_pct",
    "anomaly_5xx_threshold",
    "anomaly_failed_login_threshold",
    "anomaly_scanner_threshold",
}


def config_rows(engine: Engine) -> list[Any]:
    query = select(audit_logs).where(audit_logs.c.action == "config.updated")
    with engine.connect() as conn:
        return list(conn.execute(query.order_by(audit_logs.c.id)))


def test_get_has_every_setting_of_the_spec_with_internal_traffic_excluded(
    station: Station, admin: SignedIn
) -> None:
    result = admin.request("GET", PATH)
    assert result.status_code == 200
    current = result.json["settings"]
    assert SPEC_SETTINGS <= set(current)
    assert current["exclude_internal"] is True and current["enabled"] is True
    assert current["anonymize_ip"] is False and current["skip_paths"] == []
    assert current["dashboard_cache"] is False  # the dashboard cache is opt-in
    assert station.client.simulate_get(PATH).status_code == 401
    station.add_user("dee", "demo")
    assert station.sign_in("dee").request("GET", PATH).status_code == 403


def test_put_needs_configure_and_records_field_names_only(
    station: Station, admin: SignedIn, engine: Engine
) -> None:
    body = {"retention_days": 14, "skip_paths": ["/healthz", "/static/"], "anonymize_ip": True}
    station.add_user("eve", "viewer")
    denied = station.sign_in("eve").request("PUT", PATH, json=body)
    assert denied.status_code == 403
    assert config_rows(engine) == []
    result = admin.request("PUT", PATH, json=body)
    assert result.status_code == 200, result.text
    assert result.json["changed"] == ["anonymize_ip", "retention_days", "skip_paths"]
    assert result.json["settings"]["skip_paths"] == ["/healthz", "/static/"]
    [row] = config_rows(engine)
    assert row.target == "traffic"
    details = orjson.loads(row.details)
    assert details["fields"] == ["anonymize_ip", "retention_days", "skip_paths"]
    assert details["changes"]["retention_days"]["new"] == 14
    assert details["changes"]["skip_paths"]["added"] == ["/healthz", "/static/"]
    again = admin.request("GET", PATH).json["settings"]
    assert again["retention_days"] == 14 and again["anonymize_ip"] is True


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"retention_days": 0}, "retention_days"),
        ({"retention_days": "30"}, "retention_days"),
        ({"enabled": "yes"}, "enabled"),
        ({"skip_paths": ["healthz"]}, "skip_paths"),
        ({"skip_paths": "/healthz"}, "skip_paths"),
        ({"anomaly_error_rate_pct": 0}, "anomaly_error_rate_pct"),
        ({"anomaly_5xx_threshold": True}, "anomaly_5xx_threshold"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_bad_values_are_refused_and_nothing_is_saved(
    station: Station, admin: SignedIn, engine: Engine, body: dict[str, Any], field: str
) -> None:
    result = admin.request("PUT", PATH, json=body)
    assert result.status_code == 422
    assert result.json["error"]["code"] == "invalid"
    assert field in str(result.json["error"])
    assert admin.request("GET", PATH).json["settings"] == TrafficSettings().as_dict()
    assert config_rows(engine) == []


def test_storage_round_trips_every_field(conn: Connection) -> None:
    assert load_settings(conn) == TrafficSettings()
    changes: dict[str, Any] = {
        "enabled": False,
        "retention_days": 7,
        "log_api_requests": True,
        "authenticated_only": True,
        "exclude_bots": True,
        "exclude_internal": False,
        "skip_paths": ["/a", "/b/"],
        "anonymize_ip": True,
        "geoip_database_path": "/srv/geo/city.mmdb",
        "geoip_asn_database_path": "/srv/geo/asn.mmdb",
        "resolve_hostnames": True,
        "dashboard_cache": True,
        "anomaly_detection_enabled": False,
        "anomaly_error_rate_pct": 12.5,
        "anomaly_5xx_threshold": 4,
        "anomaly_failed_login_threshold": 6,
        "anomaly_scanner_threshold": 9,
        "anomaly_spike_factor": 2.5,
        "site_hosts": ["example.org", "alerts.example.net"],
    }
    assert set(changes) == set(FIELD_NAMES)
    saved, changed = save_settings(conn, changes, datetime.now(UTC))
    assert changed == sorted(FIELD_NAMES)
    assert load_settings(conn) == saved
    assert saved.as_dict() == changes
    assert save_settings(conn, changes, datetime.now(UTC))[1] == []
    with pytest.raises(Invalid):
        save_settings(conn, {"retention_days": 99_999}, datetime.now(UTC))
