"""The decoder-monitor and ENDEC feeds reach loopback receivers, which check the credentials:
every received header (valid, duplicate, refused) as JSON with the bearer token, an aired
message as CAP 1.2 with HTTP Basic; the end of airing also notifies the subscribed channels."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from sqlalchemy import select

from alertstation.audio.same_monitor import SameMonitor
from alertstation.audio.sources import SourceConfig, create_source
from alertstation.db.engine import begin_write
from alertstation.eas.airing import onair
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.decode import Rejected
from alertstation.errors import Invalid
from alertstation.notifications import delivery, feeds, service
from alertstation.notifications.tables import (
    notification_channels,
    notification_deliveries,
    notifications,
)
from alertstation.same import SameHeader
from alertstation.settings_admin import sections
from alertstation.worker.jobs import JOBS
from tests.eas.airing_support import queue_message, timed_aplay
from tests.eas.test_airing import short_message
from tests.notifications.receivers import http_receiver
from tests.support import StationHarness

TOKEN = "monitor-token-7c1d"
PASSWORD = "endec-pass-93ab"
CAP = "{urn:oasis:names:tc:emergency:cap:1.2}"


def save_feed(station: StationHarness, **values: Any) -> None:
    with begin_write(station.engine) as conn:
        sections.save(conn, sections.DECODER_FEED, values, updated_by="t", now=station.clock())


def feed_rows(station: StationHarness) -> list[Any]:
    with station.engine.connect() as conn:
        query = select(notification_deliveries).where(notification_deliveries.c.feed.isnot(None))
        return list(conn.execute(query.order_by(notification_deliveries.c.id)))


def test_every_received_header_reaches_the_decoder_monitor_with_its_token(
    station: StationHarness,
) -> None:
    header = SameHeader.parse("ZCZC-WXR-TOR-039173-039051+0030-3281720-KXYZ/NWS-")
    with http_receiver() as monitor:
        save_feed(
            station,
            monitor_enabled=True,
            monitor_url=f"http://127.0.0.1:{monitor.port}/eas/received",
            monitor_token=TOKEN,
        )
        with begin_write(station.engine) as conn:
            source = create_source(
                conn,
                SourceConfig(name="WX radio", kind="stream", url="http://127.0.0.1:9/"),
                station.clock(),
            )
        same = SameMonitor(station.app.station, 22050)
        same.store(source, header, 3)
        same.store(source, header, 2)
        refused_text = "ZCZC-WXR-TOR-039173+0000-3281720-KXYZ/NWS-"
        reason = "2 identical bursts, but the purge time +0000 is refused"
        same.refused(source, Rejected("header", (refused_text,) * 2, reason, 0, 1))
        assert [row.state for row in feed_rows(station)] == ["pending"] * 3

        assert delivery.send_due(station.engine, clock=station.clock).sent == 3

        assert {seen.headers["Authorization"] for seen in monitor.seen} == {f"Bearer {TOKEN}"}
        assert {seen.path for seen in monitor.seen} == {"/eas/received"}
        bodies = [json.loads(seen.body) for seen in monitor.seen]
    assert [b["status"] for b in bodies] == ["valid", "duplicate", "refused"]
    assert [b["header"] for b in bodies] == [header.encode(), header.encode(), refused_text]
    assert bodies[0]["source"] == "WX radio" and bodies[0]["bursts"] == 3
    assert bodies[2]["reason"] == reason
    assert all(TOKEN not in (row.payload or "") for row in feed_rows(station))


@pytest.fixture
def alsa(station: StationHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "bin"
    timed_aplay(folder, scale=0.0)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    with begin_write(station.engine) as conn:
        settings_airing.save(conn, {"alsa_enabled": True}, updated_by="t", now=station.clock())


def test_an_aired_message_reaches_the_endec_as_cap_and_notifies_the_channels(
    station: StationHarness, alsa: None
) -> None:
    with http_receiver() as endec, http_receiver() as hook:
        save_feed(
            station,
            endec_enabled=True,
            endec_host="127.0.0.1",
            endec_port=endec.port,
            endec_path="/cap/ingest",
            endec_user="station",
            endec_password=PASSWORD,
        )
        with begin_write(station.engine) as conn:
            body = {"name": "hook", "url": f"json://127.0.0.1:{hook.port}/", "events": ["aired"]}
            service.create_channel(
                conn, service.check_channel(body, creating=True), by="t", now=station.clock()
            )
        message = short_message()
        queue_message(station.app.station, message, origin="manual")
        assert onair.run_once(station.app.station) is True
        with station.engine.connect() as conn:
            (note,) = conn.execute(select(notifications)).all()
        assert note.event == "aired" and note.audio_path.endswith(".wav")

        assert delivery.send_due(station.engine, clock=station.clock).sent == 2

        (sent,) = endec.seen
        assert sent.path == "/cap/ingest"
        expected = "Basic " + base64.b64encode(f"station:{PASSWORD}".encode()).decode()
        assert sent.headers["Authorization"] == expected
        assert json.loads(hook.seen[0].body)["title"] == note.subject
    alert = ET.fromstring(sent.body)
    assert alert.tag == f"{CAP}alert"
    info = alert.find(f"{CAP}info")
    assert info.find(f"{CAP}eventCode/{CAP}value").text == "RWT"
    geocodes = [g.find(f"{CAP}value").text for g in info.iter(f"{CAP}geocode")]
    assert geocodes == list(SameHeader.parse(message.header).locations)
    audio = base64.b64decode(info.find(f"{CAP}resource/{CAP}derefUri").text)
    assert audio[:4] == b"RIFF" and info.find(f"{CAP}resource/{CAP}mimeType").text == "audio/x-wav"


def test_a_refused_feed_delivery_waits_a_minute_and_keeps_its_reason(
    station: StationHarness,
) -> None:
    with http_receiver(status=401) as monitor:
        save_feed(station, monitor_enabled=True, monitor_url=f"http://127.0.0.1:{monitor.port}/")
        with begin_write(station.engine) as conn:
            feeds.queue_monitor(
                conn, source="s", header="ZCZC-", status="refused", received_at=station.clock()
            )
        assert delivery.send_due(station.engine, clock=station.clock).retried == 1
    (row,) = feed_rows(station)
    assert row.state == "pending" and row.error.startswith("HTTP 401")
    assert (row.next_attempt_at - station.clock()).total_seconds() == 60


def test_a_message_airs_while_a_channel_holds_the_delivery_round(
    station: StationHarness, alsa: None
) -> None:
    with http_receiver(delay=60.0) as hook:
        with begin_write(station.engine) as conn:
            body = {"name": "slow", "url": f"json://127.0.0.1:{hook.port}/", "events": ["aired"]}
            service.create_channel(
                conn, service.check_channel(body, creating=True), by="t", now=station.clock()
            )
            channel_id = conn.execute(select(notification_channels.c.id)).scalar_one()
            service.send_test(conn, channel_id, by="t", now=station.clock())
        job = next(job for job in JOBS if job.name == "notification-delivery")
        job.run(station.app.station)  # starts the round in its own thread and returns
        hook.wait_for(1)  # the channel now holds the round

        queue_message(station.app.station, short_message(), origin="manual")
        assert onair.run_once(station.app.station) is True  # airs without waiting
        with station.engine.connect() as conn:
            state = conn.execute(select(eas_airing_queue.c.state)).scalar_one()
            aired = (
                conn.execute(
                    select(notification_deliveries.c.state).order_by(notification_deliveries.c.id)
                )
                .scalars()
                .all()
            )
        assert state == "aired"
        assert aired == ["pending", "pending"] and len(hook.seen) == 1
        hook.release.set()
        delivery.wait_for_delivery(60.0)


@pytest.mark.parametrize(
    ("name", "value"),
    [("endec_path", "../etc"), ("endec_path", "cap?x=1"), ("endec_user", "a:b")],
)
def test_bad_endec_fields_are_refused_naming_the_field(name: str, value: str) -> None:
    with pytest.raises(Invalid) as refused:
        sections.DECODER_FEED.fields[name].check(value, name)
    assert refused.value.details["field"] == name


def test_the_endec_address_is_built_from_host_port_path_and_tls() -> None:
    settings = {"endec_host": "::1", "endec_port": 10000, "endec_path": "/cap/in", "endec_tls": 1}
    assert feeds.endec_url(settings) == "https://[::1]:10000/cap/in"
    settings = {"endec_host": "endec.local", "endec_port": 8080, "endec_path": ""}
    assert feeds.endec_url(settings) == "http://endec.local:8080/"


def test_a_message_whose_purge_time_passed_in_the_queue_notifies_failed(
    station: StationHarness,
) -> None:
    with begin_write(station.engine) as conn:
        body = {"name": "ops", "url": "json://127.0.0.1:9/", "events": ["failed", "aired"]}
        service.create_channel(
            conn, service.check_channel(body, creating=True), by="t", now=station.clock()
        )
    queue_message(station.app.station, short_message(), aired_by="ops")  # purge +0030
    station.clock.advance(minutes=31)
    assert onair.run_once(station.app.station) is False
    with station.engine.connect() as conn:
        (note,) = conn.execute(select(notifications)).all()
    assert note.event == "failed" and note.audio_path is None
    assert "expired: its purge time passed" in note.body
