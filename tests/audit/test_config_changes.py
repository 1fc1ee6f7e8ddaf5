"""``config.updated`` rows carry old → new values of the fields that are not secrets; a list
field the codes added and removed; a secret stays a name; environment variables names only."""

from __future__ import annotations

import csv
import io
import json

from sqlalchemy import select

from alertstation.audit.changes import config_changes
from alertstation.audit.tables import audit_logs
from tests.support import StationHarness


def test_values_lists_secrets_and_long_values() -> None:
    before = {
        "station_id": "WXYZ/FM",
        "zone_codes": ["051059", "051107"],
        "monitor_token": "old-token",
        "icecast_password_set": False,
        "boundary": "x" * 2000,
        "password_min_length": 12,
        "flood": {"threshold": 5, "ban_minutes": 10},
    }
    after = {
        **before,
        "station_id": "WXYZ/AM",
        "zone_codes": ["051059", "051153"],
        "monitor_token": "new-token",
        "icecast_password_set": True,
        "boundary": "y" * 2000,
        "password_min_length": 14,
        "flood": {"threshold": 9, "ban_minutes": 10},
    }
    changes = config_changes(before, after, secrets=("boundary_key",))
    assert changes == {
        "station_id": {"old": "WXYZ/FM", "new": "WXYZ/AM"},
        "zone_codes": {"added": ["051153"], "removed": ["051107"]},
        "boundary": {"changed": True},
        "password_min_length": {"old": 12, "new": 14},
        "flood": {
            "old": {"threshold": 5, "ban_minutes": 10},
            "new": {"threshold": 9, "ban_minutes": 10},
        },
        "flood.threshold": {"old": 5, "new": 9},
    }
    # Only the names the save reports, and a caller's secret stays out whatever its name.
    named = config_changes(
        before, after, names=["station_id", "flood.threshold"], secrets=["station_id"]
    )
    assert named == {"flood.threshold": {"old": 5, "new": 9}}
    assert "token" not in json.dumps(config_changes(before, after))


def config_rows(station: StationHarness, target: str) -> list[dict]:
    with station.engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.details)
            .where(audit_logs.c.action == "config.updated", audit_logs.c.target == target)
            .order_by(audit_logs.c.id)
        ).scalars()
        return [json.loads(details) for details in rows]


def test_saves_record_old_and_new_values_and_never_a_secret(station: StationHarness) -> None:
    station.add_user("chief", "admin")
    admin = station.sign_in("chief")
    first = admin.request("POST", "/admin/location_settings", json={"zone_codes": "051059 051107"})
    assert first.status_code in (200, 303), first.text
    moved = admin.request("POST", "/admin/location_settings", json={"zone_codes": "051059 051153"})
    assert moved.status_code in (200, 303), moved.text
    area = config_rows(station, "location_settings")
    assert area[-1]["fields"] == ["zone_codes"]
    assert area[-1]["changes"] == {"zone_codes": {"added": ["051153"], "removed": ["051107"]}}
    feed = admin.request(
        "PUT",
        "/api/settings/decoder_feed",
        json={"monitor_url": "https://monitor.example/eas", "monitor_token": "s3cret-value"},
    )
    assert feed.status_code == 200, feed.text
    (row,) = config_rows(station, "settings.decoder_feed")
    assert row["fields"] == ["monitor_token", "monitor_url"]
    assert row["changes"] == {"monitor_url": {"old": "", "new": "https://monitor.example/eas"}}
    env = admin.request(
        "PUT", "/api/environment/variables", json={"variables": {"SESSION_LIFETIME_HOURS": "8"}}
    )
    assert env.status_code == 200, env.text
    (names_only,) = config_rows(station, "environment")
    assert names_only == {"fields": ["SESSION_LIFETIME_HOURS"]}
    exported = admin.request("GET", "/logs/export.csv?type=audit&action=config.updated", csrf=False)
    assert exported.status_code == 200
    text = exported.text
    assert "s3cret-value" not in text
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert any("051153" in cell and "removed" in cell for cell in cells)
