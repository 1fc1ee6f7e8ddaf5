"""Delivery: an in-area alert by email through a real SMTP server (the aired audio attached as
MP3) and as a JSON webhook POST; a failing channel retried on the injected clock, then logged
``failed``, its URL in no log line; the delivery job never holding up the worker."""

from __future__ import annotations

import json
import logging
import time
import wave
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine, select

from alertstation.alerts.ingest import ingest_alert
from alertstation.alerts.matching import GeocodeMatcher
from alertstation.alerts.model import Alert
from alertstation.alerts.store import Matchers
from alertstation.db.engine import begin_write
from alertstation.notifications import delivery, events, notify, service
from alertstation.notifications.tables import notification_deliveries, notifications
from tests.notifications.receivers import http_receiver, smtp_server
from tests.support import Clock, clear_tables

MATCHERS = Matchers(
    area=GeocodeMatcher(["040109"]),
    storage=GeocodeMatcher(["040000"]),
    forward_events=frozenset({"TOR"}),
)


@pytest.fixture
def db(engine: Engine) -> Engine:
    yield engine
    clear_tables(engine)


def add_channel(engine: Engine, name: str, url: str, subscribed: list[str]) -> int:
    body = {"name": name, "url": url, "events": subscribed}
    with begin_write(engine) as conn:
        made = service.create_channel(
            conn, service.check_channel(body, creating=True), by="t", now=datetime.now(UTC)
        )
    return int(made["id"])


def tornado(now: datetime) -> Alert:
    return Alert(
        identifier="urn:oid:2.49.0.1.840.0.tor-1",
        sender="w-nws.webmaster@noaa.gov",
        sent=now,
        event="Tornado Warning",
        event_code="TOR",
        headline="Tornado Warning issued for Oklahoma County",
        description="A tornado was observed near Edmond.",
        instruction="Take cover now.",
        area_desc="Oklahoma, OK",
        expires=now + timedelta(hours=1),
        same_codes=("040109",),
    )


def tone_wav(path: Path, seconds: float = 2.0, rate: int = 8000) -> Path:
    samples = 0.3 * np.sin(2 * np.pi * 853 * np.arange(int(rate * seconds)) / rate) * 32767
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.astype("<i2").tobytes())
    return path


def deliveries(engine: Engine) -> list:
    with engine.connect() as conn:
        return list(conn.execute(select(notification_deliveries).order_by("id")))


def test_an_in_area_alert_reaches_email_with_the_aired_audio_and_a_webhook(
    db: Engine, tmp_path: Path
) -> None:
    clock = Clock()
    with smtp_server() as (smtp_port, mailbox), http_receiver() as hook:
        add_channel(
            db,
            "duty inbox",
            f"mailto://127.0.0.1:{smtp_port}?from=station@example.org&to=duty@example.org",
            [events.ALERT_IN_AREA, events.AIRED],
        )
        add_channel(db, "ops hook", f"json://127.0.0.1:{hook.port}/hook", [events.ALERT_IN_AREA])
        with begin_write(db) as conn:
            result = ingest_alert(conn, tornado(clock()), MATCHERS, now=clock())
            assert result.in_area
            aired = notify(
                conn,
                events.AIRED,
                subject="Tornado Warning aired",
                body="The Tornado Warning aired.",
                now=clock(),
                audio_path=str(tone_wav(tmp_path / "message.wav")),
            )
        assert aired is not None
        assert [d.state for d in deliveries(db)] == ["pending"] * 3

        outcome = delivery.send_due(db, clock=clock)

        assert (outcome.sent, outcome.retried, outcome.failed) == (3, 0, 0)
        subjects = sorted(m["Subject"] for m in mailbox.messages)
        assert subjects == ["Tornado Warning aired", "Tornado Warning in your area"]
        assert all(r == ["duty@example.org"] for r in mailbox.recipients)
        in_area = next(m for m in mailbox.messages if "in your area" in m["Subject"])
        assert "Take cover now." in in_area.get_body(("plain",)).get_content()
        assert not list(in_area.iter_attachments())
        email_aired = next(m for m in mailbox.messages if "aired" in m["Subject"])
        (attached,) = list(email_aired.iter_attachments())
        audio = attached.get_content()
        assert attached.get_filename().endswith(".mp3")
        assert audio[:3] == b"ID3" or audio[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2")
        assert 1000 < len(audio) < 10 * 1024 * 1024

        (posted,) = hook.seen
        assert posted.path == "/hook"
        payload = json.loads(posted.body)
        assert payload["title"] == "Tornado Warning in your area"
        assert "Take cover now." in payload["message"]
    assert {d.state for d in deliveries(db)} == {"sent"}


def test_a_notification_nobody_subscribes_to_writes_nothing(db: Engine) -> None:
    add_channel(db, "aired only", "json://127.0.0.1:9/hook", [events.AIRED])
    clock = Clock()
    with begin_write(db) as conn:
        assert ingest_alert(conn, tornado(clock()), MATCHERS, now=clock()).in_area
        assert notify(conn, events.STOPPED, subject="s", body="b") is None
    with db.connect() as conn:
        assert conn.execute(select(notifications)).all() == []


def test_a_failing_channel_is_retried_after_1_2_5_10_30_minutes_then_logged_failed(
    db: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    secret = "hunter2-token-9f8e7d"
    with http_receiver(status=500) as hook:
        url = f"json://ops:{secret}@127.0.0.1:{hook.port}/hook?x={secret}"
        add_channel(db, "broken hook", url, [events.PENDING_APPROVAL])
        with begin_write(db) as conn:
            notify(conn, events.PENDING_APPROVAL, subject="RWT waits", body="b", now=clock())
        caplog.set_level(logging.DEBUG)
        tries = []
        for wait in (0, 1, 2, 5, 10, 30):
            clock.advance(minutes=wait, seconds=-1)
            assert delivery.send_due(db, clock=clock) == delivery.Outcome()  # not yet due
            clock.advance(seconds=1)
            tries.append(delivery.send_due(db, clock=clock))
            (row,) = deliveries(db)
        assert [(t.retried, t.failed) for t in tries] == [(1, 0)] * 5 + [(0, 1)]
        assert len(hook.seen) == 6
    assert row.state == "failed" and row.attempts == 6
    assert "500" in row.error and secret not in row.error
    assert delivery.send_due(db, clock=clock).sent == 0  # given up: never sent again
    logged = caplog.text + "".join(str(r.__dict__) for r in caplog.records)
    assert secret not in logged
    assert "attempt 6 failed" in caplog.text


def test_the_delivery_job_returns_at_once_while_a_channel_stalls(db: Engine) -> None:
    clock = Clock()
    with http_receiver(delay=20.0) as hook:
        add_channel(db, "slow hook", f"json://127.0.0.1:{hook.port}/hook", [events.AIRED])
        with begin_write(db) as conn:
            notify(conn, events.AIRED, subject="aired", body="b", now=clock())
        started = time.monotonic()
        assert delivery.start_delivery(db, clock) is True
        assert time.monotonic() - started < 1.0
        hook.wait_for(1)  # the channel holds the request…
        assert delivery.start_delivery(db, clock) is False  # …and no second round piles up
        hook.release.set()
        delivery.wait_for_delivery(30.0)
    assert [d.state for d in deliveries(db)] == ["sent"]
