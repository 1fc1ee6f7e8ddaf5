"""Received messages, first-class: the rules put a relayed message on the approval queue,
an operator forwards or acknowledges it, and a header read exactly but refused is listed."""

from __future__ import annotations

import numpy as np
from sqlalchemy import select

from alertstation.alerts.service import set_alert_settings
from alertstation.audio.same_monitor import SameMonitor
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from alertstation.eas.forward.pending import run_due
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.same import SameHeader
from tests.audio.test_same_monitor import RATE, a_source, archived, feed, message_audio
from tests.eas.test_decode_stream import message_of
from tests.support import SignedIn, StationHarness


def heard_now(station: StationHarness, rule: dict) -> tuple[SignedIn, dict]:
    """A relaying source hears a Tornado Warning issued now, with ``rule`` in force."""
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["039173"])
        save_rule_book(conn, {"rules": [rule]}, by="t", now=station.clock())
    source = a_source(station, "relayed", relay=True)
    header = SameHeader.build("WXR", "TOR", ["039173"], (0, 30), "KXYZ/NWS", issued=station.clock())
    feed(SameMonitor(station.app.station, RATE), source, message_audio(header.encode()))
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    (item,) = ops.request("GET", "/api/eas/received").json["items"]
    return ops, item


def test_a_message_waiting_for_approval_is_forwarded_once(audio_station: StationHarness) -> None:
    ops, item = heard_now(audio_station, {"mode": "manual"})
    assert item["pending"]["state"] == "waiting" and item["pending"]["origin"] == "relay"
    assert item["decoded"]["event_name"] == "Tornado Warning"
    assert item["decoded"]["purge_minutes"] == 30
    assert archived(audio_station) == []
    page = ops.request("GET", "/eas/received")
    assert 'href="/eas/received"' in page.text and "Acknowledge" in page.text

    answer = ops.request("POST", f"/api/eas/received/{item['id']}/forward")
    assert answer.status_code == 200, answer.text
    (row,) = archived(audio_station)
    assert row.aired_by == "ops" and SameHeader.parse(row.header).station.strip() == "ALRTSTN"
    again = ops.request("POST", f"/api/eas/received/{item['id']}/forward")
    assert again.status_code == 409


def test_acknowledging_a_held_message_keeps_it_off_the_air(
    audio_station: StationHarness,
) -> None:
    ops, item = heard_now(audio_station, {"mode": "hold", "hold_minutes": 1})
    answer = ops.request("POST", f"/api/eas/received/{item['id']}/acknowledge")
    assert answer.status_code == 200, answer.text
    assert answer.json["pending"]["state"] == "rejected"
    audio_station.clock.advance(minutes=2)
    run_due(audio_station.app.station)
    assert archived(audio_station) == []
    with audio_station.engine.connect() as conn:
        actions = conn.execute(select(audit_logs.c.action).order_by(audit_logs.c.id)).scalars()
        assert [a for a in actions if a.startswith("eas.")] == [
            "eas.pending.reject",
            "eas.received.acknowledge",
        ]


def test_a_header_read_exactly_but_refused_is_listed_with_the_rule(
    audio_station: StationHarness,
) -> None:
    source = a_source(audio_station, "one")
    text = "ZCZC-WXR-TOR-039173+0030-3671720-KXYZ/NWS-"
    bursts = np.concatenate([message_of(text, text, text, rate=RATE), np.zeros(5 * RATE)])
    signal = (bursts * 32767).astype(np.int16)
    feed(SameMonitor(audio_station.app.station, RATE), source, signal)
    audio_station.add_user("viewer", "viewer")
    viewer = audio_station.sign_in("viewer")
    (item,) = viewer.request("GET", "/api/eas/received/refused").json["items"]
    assert item["header"] == text and "Julian day must be 001-366" in item["reason"]
    assert viewer.request("GET", "/api/eas/received").json["items"] == []
    assert "Julian day must be 001-366" in viewer.request("GET", "/eas/received").text
