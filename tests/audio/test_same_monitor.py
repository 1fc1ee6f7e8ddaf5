"""The SAME monitor: valid headers stored with their audio, duplicates marked, relay rules."""

from __future__ import annotations

import json
import math
from datetime import timedelta

import numpy as np
import pytest
from sqlalchemy import select

from alertstation.alerts.service import set_alert_settings
from alertstation.audio.same_monitor import SameMonitor, message_key
from alertstation.audio.sources import SourceConfig, create_source
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from alertstation.eas.audio import render_message
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.eas.tables import eas_archive
from alertstation.same import SameHeader
from tests.support import StationHarness

RATE = 22050
CHUNK = 2205


def header_text(event: str = "TOR", station: str = "KXYZ/NWS") -> str:
    return f"ZCZC-WXR-{event}-039173-039051+0030-3281720-{station}-"


def message_audio(text: str, voice_seconds: float = 2.0) -> np.ndarray:
    t = np.arange(round(voice_seconds * RATE)) / RATE
    voice = (0.3 * 32767 * np.sin(2 * math.pi * 700 * t)).astype(np.int16)
    rendered = render_message(text, sample_rate=RATE, attention_seconds=8.0, voice=voice)
    return np.concatenate([np.zeros(RATE, np.int16), rendered, np.zeros(3 * RATE, np.int16)])


def feed(monitor: SameMonitor, source_id: int, audio: np.ndarray) -> None:
    for start in range(0, audio.size, CHUNK):
        monitor(source_id, audio[start : start + CHUNK], start)


def a_source(station: StationHarness, name: str, relay: bool = False) -> int:
    config = SourceConfig(name=name, kind="stream", url="http://127.0.0.1:9/", relay_enabled=relay)
    with begin_write(station.engine) as conn:
        return create_source(conn, config, station.clock())


def received(station: StationHarness) -> list[dict]:
    station.add_user("watch", "operator")
    answer = station.sign_in("watch").request("GET", "/api/eas/received")
    assert answer.status_code == 200, answer.text
    return list(reversed(answer.json["items"]))


def archived(station: StationHarness) -> list:
    with station.engine.connect() as conn:
        return list(conn.execute(select(eas_archive)).all())


def test_the_message_key_leaves_out_the_station() -> None:
    a = SameHeader.parse(header_text(station="KXYZ/NWS"))
    b = SameHeader.parse(header_text(station="WABC/FM"))
    assert message_key(a) == message_key(b) == "ZCZC-WXR-TOR-039173-039051+0030-3281720"


def test_a_header_is_stored_with_its_audio_and_a_repeat_is_a_duplicate(
    audio_station: StationHarness,
) -> None:
    first, second = a_source(audio_station, "one"), a_source(audio_station, "two")
    monitor = SameMonitor(audio_station.app.station, RATE)
    audio = message_audio(header_text())
    feed(monitor, first, audio)
    feed(monitor, second, audio)  # the same message heard again, from another source
    items = received(audio_station)
    assert [item["source_id"] for item in items] == [first, second]
    assert [item["duplicate"] for item in items] == [False, True]
    assert all(item["header"] == header_text() and item["bursts"] == 3 for item in items)
    # The audio runs from the end of the header bursts to the EOM: pauses, 8 s of attention
    # signal and 2 s of voice, not the EOM bursts.
    assert 10.0 < items[0]["audio_seconds"] < 15.0
    assert items[0]["relay"] == "not relayed: relay is off for this source"
    assert "duplicate" in items[1]["relay"]
    audio_stream = audio_station.client.simulate_get(items[0]["audio_url"])
    assert audio_stream.status_code == 401  # sign-in required
    audio_station.add_user("ops2", "operator")
    wav = audio_station.sign_in("ops2").request("GET", items[0]["audio_url"])
    assert wav.status_code == 200 and wav.content[:4] == b"RIFF"
    assert archived(audio_station) == []


def test_a_relaying_source_airs_the_message_with_the_stations_own_header_once(
    audio_station: StationHarness,
) -> None:
    source = a_source(audio_station, "relayed", relay=True)
    with begin_write(audio_station.engine) as conn:
        set_alert_settings(conn, zone_codes=["039173"])
        book = {"rules": [{"sources": [f"audio:{source}"], "mode": "auto"}]}
        save_rule_book(conn, book, by="test", now=audio_station.clock())
    monitor = SameMonitor(audio_station.app.station, RATE)
    audio = message_audio(header_text())
    feed(monitor, source, audio)
    feed(monitor, source, audio)  # heard twice: the repeat is never relayed
    items = received(audio_station)
    assert [item["duplicate"] for item in items] == [False, True]
    rows = archived(audio_station)
    assert len(rows) == 1 and rows[0].aired_by == "relay"
    own = SameHeader.parse(rows[0].header)
    heard = SameHeader.parse(header_text())
    assert (own.event, own.locations, own.purge, own.issued) == (
        heard.event,
        heard.locations,
        heard.purge,
        heard.issued,
    )
    assert own.station != heard.station
    assert items[0]["relay_message_id"] == rows[0].id
    with audio_station.engine.connect() as conn:
        audits = conn.execute(
            select(audit_logs).where(audit_logs.c.action == "eas.broadcast")
        ).all()
    assert len(audits) == 1 and audits[0].username == "relay"
    assert json.loads(audits[0].details)["received_header"] == header_text()


@pytest.mark.parametrize(
    ("text", "codes", "reason"),
    [
        (header_text("RWT"), ["039173"], "excluded"),
        (header_text(), ["048201"], "area"),
    ],
)
def test_excluded_tests_and_other_areas_never_air(
    audio_station: StationHarness, text: str, codes: list[str], reason: str
) -> None:
    with begin_write(audio_station.engine) as conn:
        set_alert_settings(conn, zone_codes=codes)
    source = a_source(audio_station, "relayed", relay=True)
    feed(SameMonitor(audio_station.app.station, RATE), source, message_audio(text))
    items = received(audio_station)
    assert len(items) == 1 and reason in items[0]["relay"]
    assert archived(audio_station) == []


def test_an_eom_alone_is_not_stored_and_never_airs(audio_station: StationHarness) -> None:
    with begin_write(audio_station.engine) as conn:
        set_alert_settings(conn, zone_codes=["039173"])
    source = a_source(audio_station, "relayed", relay=True)
    audio = message_audio(header_text())
    eom_only = audio[-round(7 * RATE) :]  # the three EOM bursts and the silence after
    feed(SameMonitor(audio_station.app.station, RATE), source, eom_only)
    assert received(audio_station) == []
    assert archived(audio_station) == []


def test_a_duplicate_expires_with_the_purge_time(audio_station: StationHarness) -> None:
    source = a_source(audio_station, "one")
    monitor = SameMonitor(audio_station.app.station, RATE)
    header = SameHeader.parse(header_text())
    assert monitor.store(source, header, 2) > 0
    audio_station.clock.advance(minutes=29)
    monitor.store(source, header, 2)
    audio_station.clock.advance(minutes=2)  # past the 30-minute purge of the first
    monitor.store(source, header, 2)
    items = received(audio_station)
    assert [item["duplicate"] for item in items] == [False, True, False]
    assert timedelta(minutes=30) == header.purge
