"""The overview page's station summary: forwarding mode and rules that differ, approvals, the
on-air state, output health, open audio alerts, received messages in plain language and local
time, compliance alarms and the next weekly test; each linked to its page, each with an empty
state that says what it means."""

from __future__ import annotations

import html as html_lib
import re
from datetime import timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Engine, insert

from alertstation.audio.tables import audio_alerts, audio_sources, received_eas_messages
from alertstation.db.engine import begin_write
from alertstation.eas.airing import settings as airing_settings
from alertstation.eas.airing.tables import eas_airing_outputs, eas_airing_queue, eas_output_health
from alertstation.eas.forward import rwt
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.eas.forward.tables import eas_pending
from alertstation.eas.tables import eas_archive
from alertstation.http.templates import local_time
from alertstation.operations.compliance.tables import compliance_alarms
from tests.support import StationHarness

ZONE = "America/Chicago"


def _section(page: str, name: str) -> str:
    found = re.search(rf'<section class="panel" id="home-{name}".*?</section>', page, re.S)
    assert found, f"no section home-{name}"
    return html_lib.unescape(found.group(0))


def _header(station: StationHarness, event: str = "TOR", minutes_ago: int = 0) -> str:
    issued = station.clock() - timedelta(minutes=minutes_ago)
    stamp = f"{issued.timetuple().tm_yday:03d}{issued:%H%M}"
    return f"ZCZC-WXR-{event}-039085+0030-{stamp}-KCLE/NWS-"


def test_a_new_station_says_what_each_summary_item_means(station: StationHarness) -> None:
    station.add_user("boss", "admin")
    page = station.sign_in("boss").request("GET", "/").text

    assert "Nothing is on the air." in _section(page, "on-air")
    forwarding = _section(page, "forwarding")
    assert '<a href="/eas/forward">Forwarding</a>' in forwarding
    assert "Default: <strong>wait for an operator's approval</strong>" in forwarding
    assert "The rules were never saved" in forwarding
    assert "No message waits for approval." in _section(page, "approvals")
    outputs = _section(page, "outputs")
    assert outputs.count('data-output-state="off"') == 2
    assert "No audio output is set up: messages are archived, not aired." in outputs
    assert "No compliance alarm" in _section(page, "alarms")
    assert "No open audio alert" in _section(page, "audio-alerts")
    assert "No SAME message received yet." in _section(page, "received")
    weekly = _section(page, "weekly-test")
    assert "The weekly test schedule is off." in weekly
    assert 'href="/eas/forward#rwt-heading"' in weekly


def test_the_summary_shows_the_station_state_each_item_linked(
    station: StationHarness, engine: Engine
) -> None:
    station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    assert (
        boss.request("PUT", "/api/settings/application", json={"time_zone": ZONE}).status_code
        == 200
    )
    now = station.clock()
    zone = ZoneInfo(ZONE)
    received_header = _header(station, "SVR", minutes_ago=3)
    with begin_write(engine) as conn:
        save_rule_book(
            conn,
            {
                "rules": [
                    {"events": ["TOR"], "mode": "auto"},
                    {"events": ["RWT"], "mode": "manual"},
                    {"events": ["SVR"], "mode": "hold", "hold_minutes": 5},
                ],
                "default": {"mode": "manual"},
            },
            by="boss",
            now=now,
        )
        rwt.save_schedule(
            conn,
            {"enabled": True, "location_codes": ["039085"], "weekday": 2, "time_of_day": "11:00"},
            by="boss",
            now=now,
        )
        airing_settings.save(
            conn,
            {
                "icecast_enabled": True,
                "icecast_host": "127.0.0.1",
                "icecast_port": 8123,
                "icecast_password": "never-shown-5521",
                "alsa_enabled": True,
                "alsa_device": "hw:0,0",
            },
            updated_by="boss",
            now=now,
        )
        conn.execute(
            insert(eas_output_health),
            [
                {
                    "name": "icecast",
                    "target": "127.0.0.1:8123",
                    "reachable": False,
                    "detail": "no answer within 5 s: connection refused",
                    "checked_at": now,
                },
                # checked on the device used before the settings changed: not current
                {
                    "name": "alsa",
                    "target": "default",
                    "reachable": True,
                    "detail": "the device default is listed and opens",
                    "checked_at": now,
                },
            ],
        )
        source = conn.execute(
            insert(audio_sources)
            .values(name="wxr-162-550", kind="stream", url="https://radio.example/wxr")
            .values(created_at=now, updated_at=now, state="running")
            .returning(audio_sources.c.id)
        ).scalar_one()
        conn.execute(
            insert(audio_alerts).values(
                source_id=source, kind="source_down", detail="no audio for 30 s", started_at=now
            )
        )
        conn.execute(
            insert(received_eas_messages).values(
                source_id=source,
                header=received_header,
                message_key=received_header,
                event_code="SVR",
                received_at=now - timedelta(minutes=2),
                expires_at=now + timedelta(minutes=28),
                bursts=3,
            )
        )
        conn.execute(
            insert(eas_pending).values(
                origin="relay",
                source=f"audio:{source}",
                header=_header(station, "SVR", minutes_ago=3).replace("KCLE/NWS", "WXYZ/FM "),
                event_code="SVR",
                rule="rule 3",
                mode="hold",
                hold_minutes=5,
                state="held",
                created_at=now,
                air_at=now + timedelta(minutes=5),
                expires_at=now + timedelta(minutes=28),
            )
        )
        conn.execute(
            insert(compliance_alarms).values(
                kind="station_test",
                source="station",
                detail="no weekly test aired since the station started",
                raised_at=now,
            )
        )
        archive = conn.execute(
            insert(eas_archive)
            .values(header=_header(station), wav_path="x.wav", sample_rate=22050, duration=20.0)
            .values(aired_at=now, aired_by="boss")
            .returning(eas_archive.c.id)
        ).scalar_one()
        item = conn.execute(
            insert(eas_airing_queue)
            .values(archive_id=archive, origin="manual", state="airing", enqueued_at=now)
            .values(started_at=now)
            .returning(eas_airing_queue.c.id)
        ).scalar_one()
        conn.execute(
            insert(eas_airing_outputs).values(queue_id=item, name="icecast", started_at=now)
        )

    page = boss.request("GET", "/").text

    on_air = _section(page, "on-air")
    assert 'data-on-air="true"' in on_air and "ON AIR" in on_air
    assert (
        "Tornado Warning" in on_air
        and '<a href="/eas/manual#queue-heading">On the air</a>' in on_air
    )

    forwarding = _section(page, "forwarding")
    assert "2 of 3 rules differ from the default." in forwarding

    approvals = _section(page, "approvals")
    assert '<a href="/eas/pending">Approvals waiting</a>' in approvals
    assert "1</strong> message waiting" in approvals
    assert "Severe Thunderstorm Warning" in approvals
    assert local_time(now + timedelta(minutes=5), zone) in approvals

    outputs = _section(page, "outputs")
    assert '<a href="/admin/eas_settings">Output health</a>' in outputs
    assert 'data-output="icecast" data-output-state="unreachable"' in outputs
    assert "127.0.0.1:8123" in outputs and "connection refused" in outputs
    assert f"checked {local_time(now, zone)}" in outputs
    assert 'data-output="alsa" data-output-state="unchecked"' in outputs
    assert "never-shown-5521" not in page
    assert 'data-output-stale="true"' not in outputs

    station.clock.advance(minutes=6)  # no check since: the worker may be stopped
    later = _section(boss.request("GET", "/").text, "outputs")
    assert 'data-output-stale="true"' in later and "it may be stopped" in later

    alarms = _section(page, "alarms")
    assert '<a href="/eas/compliance">Compliance alarms</a>' in alarms
    assert "no weekly test aired in 7 days" in alarms

    audio = _section(page, "audio-alerts")
    assert '<a href="/audio/alerts">Open audio alerts</a>' in audio
    assert "Source down</strong> on wxr-162-550" in audio and "no audio for 30 s" in audio

    received = _section(page, "received")
    assert '<a href="/eas/received">Recently received messages</a>' in received
    assert f"<code>{received_header}</code>" in received
    plain = re.search(r'<p class="plain-text">(.*?)</p>', received, re.S)
    assert plain and "Severe Thunderstorm Warning" in plain.group(1)
    assert f"received {local_time(now - timedelta(minutes=2), zone)} from wxr-162-550" in received
    assert "(" in local_time(now, zone)  # a local time with UTC beside it, not UTC alone

    weekly = _section(page, "weekly-test")
    with engine.connect() as conn:
        slot = rwt.schedule_view(conn, now)["next_slot"]
    assert slot and local_time(slot, zone) in weekly
    assert "Every Wednesday at 11:00 station time." in weekly


def test_a_viewer_sees_the_summary_without_links_it_cannot_follow(
    station: StationHarness, engine: Engine
) -> None:
    now = station.clock()
    with begin_write(engine) as conn:
        airing_settings.save(
            conn,
            {"icecast_enabled": True, "icecast_password": "pw", "icecast_port": 8124},
            updated_by="boss",
            now=now,
        )
    station.add_user("watcher", "viewer")
    station.add_user("guest", "demo")
    page = station.sign_in("watcher").request("GET", "/").text
    assert '<a href="/eas/pending">Approvals waiting</a>' in page  # view_config may look
    assert (
        'href="/eas/manual#queue-heading"' not in page
        and '<a href="/admin/eas_settings">' not in page
    )
    assert "127.0.0.1:8124" in _section(page, "outputs")

    demo = station.sign_in("guest").request("GET", "/").text
    outputs = _section(demo, "outputs")
    assert 'data-output-state="unchecked"' in outputs and "127.0.0.1:8124" not in outputs
    assert (
        '<a href="/eas/pending">' not in demo
        and '<h2 id="approvals-heading">Approvals waiting' in demo
    )
