"""Monitoring compliance with an injected clock: assigned sources, the station's own tests, the
RMT relay deadline, the alarms the compliance job raises and clears, the page and its API."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from alertstation.alerts.service import set_alert_settings
from alertstation.audio.same_monitor import SameMonitor
from alertstation.audio.sources import SourceConfig, create_source
from alertstation.audit.actor import Actor
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from alertstation.eas.airing import onair
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.archive import AiredMessage
from alertstation.eas.forward import pending
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.eas.log.tables import eas_log
from alertstation.notifications import service as channels
from alertstation.notifications.events import COMPLIANCE_ALARM
from alertstation.notifications.tables import notifications
from alertstation.operations.compliance.service import run_compliance
from alertstation.operations.compliance.tables import compliance_assignments, rmt_deadlines
from alertstation.same import SameHeader
from tests.eas.airing_support import queue_message
from tests.eas.test_airing import stub_aplay
from tests.support import SignedIn, StationHarness

RATE = 22050


def issued(now: datetime) -> str:
    return f"{now.timetuple().tm_yday:03d}{now.hour:02d}{now.minute:02d}"


def header(event: str, now: datetime, station: str = "KXYZ/NWS", purge: str = "0100") -> str:
    return f"ZCZC-WXR-{event}-039173+{purge}-{issued(now)}-{station}-"


def a_source(station: StationHarness, name: str, relay: bool = False) -> int:
    config = SourceConfig(name=name, kind="stream", url="http://127.0.0.1:9/", relay_enabled=relay)
    with begin_write(station.engine) as conn:
        return create_source(conn, config, station.clock())


@pytest.fixture
def admin(station: StationHarness) -> SignedIn:
    station.add_user("chief", "admin")
    return station.sign_in("chief")


@pytest.fixture
def on_air(station: StationHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ALSA output through a stand-in ``aplay`` (no sound card here): items air ``aired``."""
    bin_dir = tmp_path / "bin"
    stub_aplay(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with begin_write(station.engine) as conn:
        settings_airing.save(
            conn,
            {"alsa_enabled": True, "alsa_device": "default"},
            updated_by="t",
            now=station.clock(),
        )


def kinds(alarms: list[dict]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for alarm in alarms:
        found.setdefault(alarm["kind"], []).append(alarm["source"])
    return found


def test_the_settings_are_checked_and_audited(station: StationHarness, admin: SignedIn) -> None:
    source = a_source(station, "state relay")
    for bad in (0, 32, "8", True, 8.5):
        answer = admin.request("PUT", "/api/eas/compliance/settings", json={"silence_days": bad})
        assert answer.status_code == 422, bad
        assert answer.json["error"]["code"] == "invalid"
    for sources in (["audio:999"], ["tv:1"], "audio:1"):
        answer = admin.request(
            "PUT", "/api/eas/compliance/settings", json={"assigned_sources": sources}
        )
        assert answer.status_code == 422, sources
    saved = admin.request(
        "PUT",
        "/api/eas/compliance/settings",
        json={"silence_days": 10, "assigned_sources": [f"audio:{source}"]},
    )
    assert saved.status_code == 200, saved.text
    assert saved.json["settings"] == {"silence_days": 10, "assigned_sources": [f"audio:{source}"]}
    view = admin.request("GET", "/api/eas/compliance").json
    assert view["settings"]["silence_days"] == 10
    assert [s["assigned"] for s in view["sources"] if s["source"] == f"audio:{source}"] == [True]
    with station.engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs).where(
                audit_logs.c.action == "config.updated", audit_logs.c.target == "compliance"
            )
        ).all()
    assert len(rows) == 1
    assert json.loads(rows[0].details)["fields"] == ["assigned_sources", "silence_days"]


def test_deleting_an_assigned_source_never_blocks_the_next_save(
    station: StationHarness, admin: SignedIn
) -> None:
    kept, deleted = a_source(station, "state relay"), a_source(station, "county stream")
    both = [f"audio:{kept}", f"audio:{deleted}"]
    saved = admin.request("PUT", "/api/eas/compliance/settings", json={"assigned_sources": both})
    assert saved.status_code == 200, saved.text
    gone = admin.request("DELETE", f"/api/audio/sources/{deleted}")
    assert gone.status_code in (200, 204), gone.text
    view = admin.request("GET", "/api/eas/compliance").json
    assert view["settings"]["assigned_sources"] == [f"audio:{kept}"]
    again = admin.request("PUT", "/api/eas/compliance/settings", json={"silence_days": 9})
    assert again.status_code == 200, again.text
    assert again.json["settings"] == {"silence_days": 9, "assigned_sources": [f"audio:{kept}"]}
    with station.engine.connect() as conn:
        stored = conn.execute(select(compliance_assignments.c.source)).scalars().all()
    assert stored == [f"audio:{kept}"]


def test_an_assigned_source_without_a_weekly_test_for_8_days_raises_the_alarm(
    station: StationHarness, admin: SignedIn
) -> None:
    source, other = a_source(station, "LP-1"), a_source(station, "not assigned")
    with begin_write(station.engine) as conn:
        body = {"name": "ops", "url": "json://127.0.0.1:9/", "events": [COMPLIANCE_ALARM]}
        channels.create_channel(
            conn, channels.check_channel(body, creating=True), by="t", now=station.clock()
        )
    assigned = admin.request(
        "PUT", "/api/eas/compliance/settings", json={"assigned_sources": [f"audio:{source}"]}
    )
    assert assigned.status_code == 200, assigned.text
    app = station.app.station
    station.clock.advance(days=8)
    assert "source_silent" not in kinds(run_compliance(app).raised)
    station.clock.advance(minutes=1)
    raised = [a for a in run_compliance(app).raised if a["kind"] == "source_silent"]
    assert [a["source"] for a in raised] == [f"audio:{source}"]  # the unassigned one is quiet
    reason_url = f"/eas/log?topic=missed_test&note_source=audio%3A{source}#note-heading"
    assert raised[0]["record_reason_url"] == reason_url and "LP-1" in raised[0]["detail"]
    assert "source_silent" not in kinds(run_compliance(app).raised)  # raised once
    # The alarm was written as a notification in the same round, once.
    with station.engine.connect() as conn:
        told = conn.execute(select(notifications).order_by(notifications.c.id)).all()
    silent = [n for n in told if "LP-1" in n.body]
    assert [n.event for n in silent] == [COMPLIANCE_ALARM]
    assert silent[0].subject.startswith("Compliance alarm: assigned source")
    assert reason_url in silent[0].body
    admin = station.sign_in("chief")  # eight days on: the first session has ended
    page = admin.request("GET", "/eas/compliance", csrf=False, headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert f'<a href="{reason_url.replace("&", "&amp;")}">Record the reason</a>' in page.text
    # The source delivers a weekly test: the alarm clears.
    monitor = SameMonitor(app, RATE, use_saved_settings=False)
    monitor.store(source, SameHeader.parse(header("RWT", station.clock())), 3)
    monitor.store(other, SameHeader.parse(header("TOR", station.clock())), 3)
    cleared = run_compliance(app).cleared
    assert [(a["kind"], a["source"]) for a in cleared] == [("source_silent", f"audio:{source}")]
    view = admin.request("GET", "/api/eas/compliance").json
    assert "source_silent" not in kinds(view["alarms"])
    (mine,) = [s for s in view["sources"] if s["source"] == f"audio:{source}"]
    assert mine["last_rwt_received"]["header"] == header("RWT", station.clock())
    assert mine["last_rmt_received"] is None and mine["last_rwt_relayed"] is None


def test_an_rmt_not_aired_raises_the_45_minute_alarm_and_relaying_it_records_the_deadline_met(
    station: StationHarness, admin: SignedIn, on_air: None
) -> None:
    first, second = a_source(station, "LP-1", relay=True), a_source(station, "LP-2", relay=True)
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["039173"])
        save_rule_book(
            conn, {"rules": [{"events": ["RMT"], "mode": "manual"}]}, by="t", now=station.clock()
        )
    app = station.app.station
    monitor = SameMonitor(app, RATE, use_saved_settings=False)
    started = station.clock()
    text = header("RMT", started)
    message_id = monitor.store(first, SameHeader.parse(text), 3)
    monitor.relay(first, message_id, SameHeader.parse(text), None)  # waits for an operator
    run_compliance(app)
    # The same header heard on another source ten minutes later does not restart the deadline.
    station.clock.advance(minutes=10)
    monitor.store(second, SameHeader.parse(header("RMT", started, "WABC/FM")), 3)
    run_compliance(app)
    with station.engine.connect() as conn:
        (deadline,) = conn.execute(select(rmt_deadlines)).all()
    assert deadline.started_at == started and deadline.source_id == first
    assert (deadline.due_at - started).total_seconds() == 3600 and deadline.met is None
    station.clock.advance(minutes=34)
    assert "rmt_unaired" not in kinds(run_compliance(app).raised)
    station.clock.advance(minutes=1)  # 45 minutes unaired
    raised = [a for a in run_compliance(app).raised if a["kind"] == "rmt_unaired"]
    assert [a["source"] for a in raised] == [f"rmt:{deadline.id}"]
    assert raised[0]["record_reason_url"] is None
    # An operator forwards it at 47 minutes; it airs.
    station.clock.advance(minutes=2)
    with station.engine.connect() as conn:
        (item,) = pending.list_open(conn)
    pending.act(app, item["id"], "forward", Actor.system("chief"))
    assert onair.run_once(app)
    outcome = run_compliance(app)
    assert [(d.id, d.met, d.aired_at) for d in outcome.deadlines] == [
        (deadline.id, True, station.clock())
    ]
    assert ("rmt_unaired", f"rmt:{deadline.id}") in [
        (a["kind"], a["source"]) for a in outcome.cleared
    ]
    with station.engine.connect() as conn:
        logged = conn.execute(select(eas_log).where(eas_log.c.kind == "note")).all()
    assert [(e.header, e.result) for e in logged] == [(text, "RMT deadline met")]
    view = admin.request("GET", "/api/eas/compliance").json
    assert view["rmt_deadlines"][0]["met"] is True
    assert "rmt_unaired" not in kinds(view["alarms"])
    (mine,) = [s for s in view["sources"] if s["source"] == f"audio:{first}"]
    assert mine["last_rmt_relayed"]["at"] == station.clock().isoformat()
    # The relayed RMT is the station's own test of the week.
    assert view["station_tests"]["last_rmt_aired"] == station.clock().isoformat()
    assert "station_test" not in kinds(view["alarms"])


def test_an_rmt_never_aired_is_recorded_missed_and_other_areas_start_no_deadline(
    station: StationHarness,
) -> None:
    source = a_source(station, "LP-1")
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["039173"])
    app = station.app.station
    monitor = SameMonitor(app, RATE, use_saved_settings=False)
    now = station.clock()
    monitor.store(source, SameHeader.parse(header("RMT", now, purge="0200")), 3)
    elsewhere = f"ZCZC-WXR-RMT-048201+0100-{issued(now)}-KXYZ/NWS-"
    monitor.store(source, SameHeader.parse(elsewhere), 3)
    run_compliance(app)
    station.clock.advance(minutes=61)
    outcome = run_compliance(app)
    assert [(d.met, d.aired_at) for d in outcome.deadlines] == [(False, None)]
    assert "rmt_unaired" in kinds(outcome.raised)
    station.clock.advance(minutes=60)  # its valid time (two hours) is over: nothing left to do
    assert "rmt_unaired" in kinds(run_compliance(app).cleared)
    with station.engine.connect() as conn:
        assert [r.met for r in conn.execute(select(rmt_deadlines)).all()] == [False]


def test_the_station_own_weekly_test_alarm_counts_a_national_test(
    station: StationHarness, on_air: None
) -> None:
    app = station.app.station
    assert "station_test" in kinds(run_compliance(app).raised)  # nothing ever aired
    npt = f"ZCZC-PEP-NPT-000000+0030-{issued(station.clock())}-WXYZ/FM -"
    tone = (0.2 * 32767 * np.sin(2 * np.pi * 1000 * np.arange(2000) / 8000)).astype(np.int16)
    queue_message(app, AiredMessage(npt, tone, 8000), origin="relay")
    assert onair.run_once(app)
    assert "station_test" in kinds(run_compliance(app).cleared)  # a week with an NPT counts
    station.clock.advance(days=7)
    assert "station_test" not in kinds(run_compliance(app).raised)
    station.clock.advance(minutes=1)
    assert "station_test" in kinds(run_compliance(app).raised)
