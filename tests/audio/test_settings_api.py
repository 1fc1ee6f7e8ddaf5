"""Audio settings over HTTP on both backends: defaults, checks, audit with old and new values."""

from __future__ import annotations

import json

from sqlalchemy import select

from alertstation.audio.same_monitor import SameMonitor
from alertstation.audit.tables import audit_logs
from tests.support import StationHarness

SETTINGS = "/api/audio/settings"


def test_settings_read_change_and_audit_names_only(audio_station: StationHarness) -> None:
    audio_station.add_user("ops", "operator")
    audio_station.add_user("watcher", "viewer")
    ops, viewer = audio_station.sign_in("ops"), audio_station.sign_in("watcher")
    defaults = viewer.request("GET", SETTINGS)
    assert defaults.status_code == 200
    assert defaults.json["eas_monitor_enabled"] is True
    assert defaults.json["relay_excluded_events"] == ["RWT"]
    assert viewer.request("PUT", SETTINGS, json={"silence_seconds": 5}).status_code == 403
    changed = ops.request(
        "PUT",
        SETTINGS,
        json={"silence_seconds": 5, "relay_excluded_events": ["rmt", "RWT"], "sample_rate": 22050},
    )
    assert changed.status_code == 200, changed.text
    assert changed.json["changed"] == ["relay_excluded_events", "silence_seconds"]
    assert changed.json["relay_excluded_events"] == ["RMT", "RWT"]
    for body, field in (
        ({"silence_seconds": 0}, "silence_seconds"),
        ({"sample_rate": 12345}, "sample_rate"),
        ({"relay_excluded_events": ["XYZ"]}, "relay_excluded_events"),
        ({"eas_monitor_enabled": "no"}, "eas_monitor_enabled"),
        ({"volume": 11}, "volume"),
    ):
        refused = ops.request("PUT", SETTINGS, json={**body, "clipping_samples": 99})
        assert refused.status_code == 422, refused.text
        assert refused.json["error"]["details"]["field"] == field
    after = ops.request("GET", SETTINGS).json
    assert after["silence_seconds"] == 5 and after["clipping_samples"] == 10  # nothing half-done
    with audio_station.engine.connect() as conn:
        rows = conn.execute(select(audit_logs).where(audit_logs.c.target == "audio_settings")).all()
    assert len(rows) == 1
    details = json.loads(rows[0].details)
    assert details["fields"] == ["relay_excluded_events", "silence_seconds"]
    assert sorted(details["changes"]) == details["fields"]  # old -> new values beside the names


def test_the_eas_monitor_can_be_switched_off(audio_station: StationHarness) -> None:
    audio_station.add_user("ops", "operator")
    ops = audio_station.sign_in("ops")
    monitor = SameMonitor(audio_station.app.station, 22050)
    assert monitor.enabled() and monitor.excluded_events == frozenset({"RWT"})
    off = ops.request(
        "PUT", SETTINGS, json={"eas_monitor_enabled": False, "relay_excluded_events": []}
    )
    assert off.status_code == 200
    fresh = SameMonitor(audio_station.app.station, 22050)
    assert not fresh.enabled() and fresh.excluded_events == frozenset()
