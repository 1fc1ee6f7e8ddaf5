"""The overview page: area alerts, alert sources, audio sources, EAS messages, first-run steps."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from alertstation.alerts.poll.tables import poll_sources
from alertstation.alerts.tables import cap_alerts
from alertstation.audio.tables import audio_sources
from alertstation.db.engine import begin_write
from alertstation.eas.tables import eas_archive
from alertstation.worker.heartbeat import beat
from tests.support import StationHarness


def _alert(identifier: str, now: datetime, *, in_area: bool, **extra: Any) -> dict[str, Any]:
    return {
        "sender": "w-nws.webmaster@noaa.gov",
        "identifier": identifier,
        "sent": now,
        "source": "test",
        "status": "Actual",
        "msg_type": "Alert",
        "event": extra.pop("event", "Tornado Warning"),
        "event_code": "TOR",
        "severity": "Extreme",
        "urgency": "Immediate",
        "certainty": "Observed",
        "headline": "headline",
        "area_desc": extra.pop("area_desc", "Lake County"),
        "expires": now + timedelta(hours=1),
        "state": "active",
        "in_area": in_area,
        "stored_area": True,
        "raw": "<alert/>",
        "received_at": now,
        "updated_at": now,
        **extra,
    }


def _steps(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-step="(\w+)" data-done="(true|false)"', html))


def test_a_new_station_shows_the_checklist_and_helpful_empty_states(
    station: StationHarness,
) -> None:
    station.add_user("boss", "admin")
    html = station.sign_in("boss").request("GET", "/").text
    assert "Nothing to watch yet" not in html
    assert set(_steps(html).values()) == {"false"}
    assert {"zones", "area", "sources", "worker", "output", "forward", "audio"} <= set(_steps(html))
    assert '<a href="/admin/zones">Load the zone catalog</a>' in html
    assert '<a href="/audio">Monitor an audio source</a>' in html
    for empty in ("home-alerts-empty", "home-sources-empty", "home-audio-empty"):
        assert f'id="{empty}"' in html
    assert 'id="home-messages-empty"' in html and 'href="/eas/manual"' in html


def test_a_viewer_sees_the_steps_without_links_it_cannot_follow(station: StationHarness) -> None:
    station.add_user("watcher", "viewer")
    html = station.sign_in("watcher").request("GET", "/").text
    assert "<span>Load the zone catalog</span>" in html
    assert '<a href="/admin/zones">Load the zone catalog</a>' not in html
    assert '<a href="/status">Start the worker</a>' in html  # open to everyone


def test_the_overview_shows_area_alerts_sources_audio_and_messages(
    station: StationHarness, engine: Engine
) -> None:
    now = station.clock()
    with begin_write(engine) as conn:
        ids = [
            conn.execute(cap_alerts.insert().values(**row).returning(cap_alerts.c.id)).scalar_one()
            for row in (
                _alert("in-1", now, in_area=True, area_desc="Lake County"),
                _alert("out-1", now, in_area=False, event="Flood Watch", area_desc="Far County"),
                _alert("gone-1", now, in_area=True, event="Gone Warning", state="expired"),
            )
        ]
        conn.execute(
            poll_sources.insert().values(
                name="nws-feed",
                kind="cap",
                url="https://feeds.example/a.xml",
                area="",
                zones="",
                created_at=now,
                updated_at=now,
                last_attempt_at=now,
                last_success_at=now,
                next_attempt_at=now + timedelta(seconds=60),
            )
        )
        conn.execute(
            audio_sources.insert().values(
                name="wxr-162-550",
                kind="stream",
                url="https://radio.example/wxr",
                auth_password="never-shown-7781",
                created_at=now,
                updated_at=now,
                state="running",
                level_dbfs=-18.25,
                last_audio_at=now,
            )
        )
        conn.execute(
            eas_archive.insert().values(
                header="ZCZC-WXR-TOR-039085+0030-1231720-KCLE/NWS-",
                wav_path="x.wav",
                sample_rate=44100,
                duration=20.0,
                aired_by="boss",
                aired_at=now,
            )
        )
    beat(station.app.station)
    station.add_user("ops", "operator")
    html = station.sign_in("ops").request("GET", "/").text

    assert f'<a href="/alerts/{ids[0]}">Tornado Warning</a>' in html
    assert "Flood Watch" not in html and "Gone Warning" not in html
    assert "1 active alert elsewhere" not in html  # there is an area alert to show
    assert 'data-source="nws-feed"' in html and "health-healthy" in html
    assert 'data-audio-source="wxr-162-550"' in html and "-18.2 dBFS" in html
    assert "never-shown-7781" not in html and "radio.example" not in html
    assert "ZCZC-WXR-TOR-039085+0030-1231720-KCLE/NWS-" in html
    steps = _steps(html)
    assert steps["sources"] == steps["worker"] == steps["audio"] == "true"
    assert steps["zones"] == steps["area"] == "false"


def test_only_alerts_elsewhere_are_counted_with_a_link(
    station: StationHarness, engine: Engine
) -> None:
    now = station.clock()
    with begin_write(engine) as conn:
        conn.execute(cap_alerts.insert().values(**_alert("out-2", now, in_area=False)))
    station.add_user("ops", "operator")
    html = station.sign_in("ops").request("GET", "/").text
    assert "No active alert in the broadcast area." in html
    assert "1 active alert elsewhere" in html
