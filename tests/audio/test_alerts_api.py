"""Audio alerts over HTTP on both backends: open and end, list, acknowledge, resolve, all."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from alertstation.audio import alerts
from alertstation.audio.sources import SourceConfig, create_source
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from tests.support import StationHarness

ALERTS = "/api/audio/alerts"


def a_source(station: StationHarness, name: str = "Neighbour FM") -> int:
    config = SourceConfig(name=name, kind="stream", url="http://127.0.0.1:9/live")
    with begin_write(station.engine) as conn:
        return create_source(conn, config, station.clock())


def test_the_monitor_opens_one_going_alert_per_kind_and_ends_it(
    audio_station: StationHarness,
) -> None:
    source = a_source(audio_station)
    now = audio_station.clock()
    with begin_write(audio_station.engine) as conn:
        first = alerts.open_alert(conn, source, "silence", now)
        assert first is not None
        assert alerts.open_alert(conn, source, "silence", now) is None  # still going
        assert alerts.open_alert(conn, source, "clipping", now) is not None
        assert alerts.end_alert(conn, source, "silence", now + timedelta(seconds=30)) == 1
        again = alerts.open_alert(conn, source, "silence", now + timedelta(seconds=40))
        assert again not in (None, first)
        with pytest.raises(ValueError, match="kind"):
            alerts.open_alert(conn, source, "hum", now)


def test_list_acknowledge_resolve_and_resolve_all(audio_station: StationHarness) -> None:
    source = a_source(audio_station)
    now = audio_station.clock()
    with begin_write(audio_station.engine) as conn:
        ids = [
            alerts.open_alert(conn, source, kind, now + timedelta(seconds=i))
            for i, kind in enumerate(alerts.KINDS)
        ]
    audio_station.add_user("ops", "operator")
    audio_station.add_user("watcher", "viewer")
    ops, viewer = audio_station.sign_in("ops"), audio_station.sign_in("watcher")
    listed = viewer.request("GET", ALERTS)
    assert listed.status_code == 200
    assert [item["id"] for item in listed.json["items"]] == ids[::-1]  # newest first
    assert listed.json["total"] == 3
    item = listed.json["items"][0]
    for field in ("id", "source_id", "kind", "started_at", "ended_at"):
        assert field in item
    assert item["acknowledged_at"] is None and item["resolved_at"] is None
    for path in (f"{ALERTS}/{ids[0]}/acknowledge", f"{ALERTS}/{ids[0]}/resolve"):
        assert viewer.request("POST", path).status_code == 403
    acked = ops.request("POST", f"{ALERTS}/{ids[0]}/acknowledge")
    assert acked.status_code == 200 and acked.json["acknowledged_by"] == "ops"
    still_open = ops.request("GET", ALERTS, params={"state": "open"}).json
    assert ids[0] in [item["id"] for item in still_open["items"]]  # acknowledged is open
    resolved = ops.request("POST", f"{ALERTS}/{ids[1]}/resolve")
    assert resolved.json["resolved_at"] is not None and resolved.json["changed"] is True
    assert ops.request("POST", f"{ALERTS}/{ids[1]}/resolve").json["changed"] is False
    page = ops.request("GET", ALERTS, params={"state": "open", "limit": 1, "offset": 1}).json
    assert page["total"] == 2 and len(page["items"]) == 1
    assert ops.request("GET", ALERTS, params={"state": "closed"}).status_code == 422
    assert ops.request("POST", f"{ALERTS}/99999/resolve").status_code == 404
    assert viewer.request("POST", f"{ALERTS}/resolve-all").status_code == 403
    everything = ops.request("POST", f"{ALERTS}/resolve-all")
    assert everything.json == {"resolved": 2}
    assert ops.request("GET", ALERTS).json["items"] == []
    done = ops.request("GET", ALERTS, params={"state": "resolved"}).json
    assert done["total"] == 3
    assert len(ops.request("GET", ALERTS, params={"state": "all"}).json["items"]) == 3
    with audio_station.engine.connect() as conn:
        targets = conn.execute(
            select(audit_logs.c.target).where(audit_logs.c.target == "audio_alerts")
        ).all()
    assert len(targets) == 3  # acknowledge, resolve, resolve-all (not the no-op)
