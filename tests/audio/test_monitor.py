"""The audio monitor against a loopback stream server and a stand-in receiver, with real ffmpeg.

Waits use generous deadlines and assert no time. The states each runner wrote are read from
``SourceRunner.history`` and from the ``audio_sources`` rows every web process reads.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from sqlalchemy import func, select

from alertstation.audio import alerts
from alertstation.audio.monitor import AudioMonitor, IcySplitter, MonitorSettings, backoff_delay
from alertstation.audio.same_monitor import SameMonitor
from alertstation.audio.settings import save_audio_settings
from alertstation.audio.tables import audio_alerts, audio_sources
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from alertstation.eas.audio import render_message
from tests.audio.stream_server import METAINT, StreamServer, running_stream_server
from tests.audio.writers import SINE_COMMAND
from tests.support import SignedIn, StationHarness

RATE = 8000
DEADLINE = 90.0
PASSWORD = "Mon1tor-Pa55word-xyz"
SOURCES = "/api/audio/sources"
FAST = MonitorSettings(
    sample_rate=RATE,
    backoff_base=0.2,
    backoff_cap=1.0,
    persist_every=0.2,
    rescan_every=0.2,
    stall_timeout=10.0,
    silence_seconds=1.0,
    silence_threshold_dbfs=-45.0,
    source_down_after=0.5,
)

pytestmark = pytest.mark.skipif(
    __import__("shutil").which("ffmpeg") is None, reason="ffmpeg is not installed"
)


def tone_then_silence() -> np.ndarray:
    t = np.arange(2 * RATE) / RATE
    tone = (0.3 * 32767 * np.sin(2 * math.pi * 440 * t)).astype(np.int16)
    return np.concatenate([tone, np.zeros(3 * RATE, dtype=np.int16)])


def wait_for(check: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}")


@contextmanager
def monitoring(station: StationHarness) -> Iterator[AudioMonitor]:
    with begin_write(station.engine) as conn:  # the thresholds the monitor reads
        save_audio_settings(
            conn,
            {
                "silence_seconds": FAST.silence_seconds,
                "silence_threshold_dbfs": FAST.silence_threshold_dbfs,
            },
            by="test",
            now=station.clock(),
        )
    stop = threading.Event()
    same = SameMonitor(station.app.station, FAST.sample_rate)
    monitor = AudioMonitor(station.app.station, stop, FAST, listeners=[same])
    thread = threading.Thread(target=monitor.run, daemon=True)
    thread.start()
    try:
        yield monitor
    finally:
        stop.set()
        thread.join(timeout=60)
        assert not thread.is_alive()


def row(station: StationHarness, source_id: int) -> Any:
    with station.engine.connect() as conn:
        return conn.execute(select(audio_sources).where(audio_sources.c.id == source_id)).one()


def add_stream(ops: SignedIn, server: StreamServer, password: str) -> int:
    body = {
        "name": "Neighbour FM",
        "kind": "stream",
        "url": server.url("/live"),
        "device_params": {"auth_username": "monitor", "auth_password": password},
        "skip_url_check": True,
    }
    created = ops.request("POST", SOURCES, json=body)
    assert created.status_code == 201, created.text
    return int(created.json["id"])


def operator(station: StationHarness) -> SignedIn:
    station.add_user("ops", "operator")
    return station.sign_in("ops")


def test_backoff_is_full_jitter_under_a_cap() -> None:
    import random

    rng = random.Random(1)
    delays = [backoff_delay(attempt, 1.0, 8.0, rng) for attempt in range(200)]
    assert all(0 <= d <= 8.0 for d in delays)
    assert max(delays[:1]) <= 1.0 and max(delays[50:]) > 4.0
    assert len(set(delays)) == len(delays)  # jittered, not fixed steps


def test_icy_metadata_is_stripped_and_the_title_kept() -> None:
    audio = bytes(range(256)) * 40
    meta = b"StreamTitle='Weather Radio';" + b"\x00" * 4
    stream = audio[:METAINT] + bytes([len(meta) // 16]) + meta + audio[METAINT : 2 * METAINT]
    stream += b"\x00" + audio[2 * METAINT :]
    splitter = IcySplitter(METAINT)
    out = b"".join(splitter.feed(stream[i : i + 333]) for i in range(0, len(stream), 333))
    assert out == audio and splitter.title == "Weather Radio"


def test_a_stream_runs_reports_levels_and_title_and_opens_and_ends_silence(
    audio_station: StationHarness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    ops = operator(audio_station)
    with running_stream_server(tone_then_silence(), RATE, speed=2.0) as server:
        server.credentials = ("monitor", PASSWORD)
        server.serve("/live", "stream")
        source_id = add_stream(ops, server, PASSWORD)
        with monitoring(audio_station) as monitor:
            wait_for(lambda: row(audio_station, source_id).state == "running", "running")
            wait_for(lambda: row(audio_station, source_id).icy_title, "the ICY title")

            def silence_ended() -> bool:
                with audio_station.engine.connect() as conn:
                    return bool(
                        conn.execute(
                            select(func.count())
                            .select_from(audio_alerts)
                            .where(
                                audio_alerts.c.kind == "silence",
                                audio_alerts.c.ended_at.is_not(None),
                            )
                        ).scalar_one()
                    )

            wait_for(silence_ended, "a silence alert that opened and ended")
            runner = monitor.runners[source_id][0]
            assert runner.history[:2] == ["starting", "running"]
        shown = ops.request("GET", f"{SOURCES}/{source_id}").json
        assert shown["icy_title"] == "Station ID"
        assert shown["last_audio_at"] is not None and shown["level_dbfs"] is not None
        listed = ops.request("GET", "/api/audio/alerts", params={"state": "all"})
        assert "silence" in [item["kind"] for item in listed.json["items"]]
        assert all(h.get("authorization") for _, h in server.requests)
    # The password is in no response, log line or audit row.
    with audio_station.engine.connect() as conn:
        audit = " ".join(str(r._asdict()) for r in conn.execute(select(audit_logs)))
    assert PASSWORD not in audit
    assert PASSWORD not in caplog.text
    assert PASSWORD not in listed.text and PASSWORD not in str(shown)


def test_a_header_on_a_stream_reaches_the_received_list(audio_station: StationHarness) -> None:
    header = "ZCZC-WXR-SVR-039173+0030-3281720-KXYZ/NWS-"
    message = render_message(header, sample_rate=RATE, attention_seconds=8.0)
    pcm = np.concatenate([np.zeros(2 * RATE, np.int16), message, np.zeros(30 * RATE, np.int16)])
    ops = operator(audio_station)
    with running_stream_server(pcm, RATE, speed=4.0) as server:
        server.serve("/live", "stream")
        add_stream(ops, server, PASSWORD)
        with monitoring(audio_station):

            def heard() -> list[dict[str, Any]]:
                return ops.request("GET", "/api/eas/received").json["items"]

            items = wait_for(heard, "the header in /api/eas/received")
    assert items[0]["header"] == header and items[0]["bursts"] >= 2


def inconsistent_commits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Check every monitor transaction before it commits; list the sources it left running
    with ``source_down`` still open, or fatal without it (states no reader may ever see)."""
    import alertstation.audio.monitor as monitor_module

    real = monitor_module.begin_write
    seen: list[tuple[str, int]] = []

    @contextmanager
    def checked(engine: Any) -> Iterator[Any]:
        with real(engine) as conn:
            yield conn
            down = select(audio_alerts.c.source_id).where(
                audio_alerts.c.kind == "source_down", audio_alerts.c.ended_at.is_(None)
            )
            running = select(audio_sources.c.id).where(
                audio_sources.c.state == "running", audio_sources.c.id.in_(down)
            )
            fatal = select(audio_sources.c.id).where(
                audio_sources.c.state == "fatal", audio_sources.c.id.not_in(down)
            )
            seen.extend(("running while down", i) for i in conn.execute(running).scalars())
            seen.extend(("fatal but not down", i) for i in conn.execute(fatal).scalars())

    monkeypatch.setattr(monitor_module, "begin_write", checked)
    return seen


def test_a_wrong_password_is_fatal_without_a_restart_loop_until_restarted(
    audio_station: StationHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    ops = operator(audio_station)
    inconsistent = inconsistent_commits(monkeypatch)
    with running_stream_server(tone_then_silence(), RATE) as server:
        server.credentials = ("monitor", PASSWORD)
        server.serve("/live", "stream")
        source_id = add_stream(ops, server, "wrong-password")
        with monitoring(audio_station) as monitor:
            fatal = wait_for(
                lambda: (r := row(audio_station, source_id)).state == "fatal" and r, "fatal"
            )
            assert "401" in fatal.error_message
            tried = server.count("/live")
            time.sleep(3 * FAST.rescan_every + 5 * FAST.backoff_cap)  # room for a loop to show
            assert server.count("/live") == tried
            assert row(audio_station, source_id).state == "fatal"
            with audio_station.engine.connect() as conn:
                page = alerts.list_alerts(conn, "open")
            assert [a.kind for a in page.rows] == ["source_down"]
            fixed = ops.request(
                "PUT",
                f"{SOURCES}/{source_id}",
                json={"device_params": {"auth_username": "monitor", "auth_password": PASSWORD}},
            )
            assert fixed.status_code == 200  # an edit of the credentials restarts it
            wait_for(lambda: row(audio_station, source_id).state == "running", "running again")
            assert monitor.runners[source_id][0].history.count("fatal") == 1
            with audio_station.engine.connect() as conn:
                down = (
                    conn.execute(
                        select(audio_alerts.c.ended_at).where(audio_alerts.c.kind == "source_down")
                    )
                    .scalars()
                    .all()
                )
            assert down and all(down), "source_down ended once audio flowed"
    assert inconsistent == [], "a transaction left the source's state and source_down apart"


def test_a_503_reconnects_then_runs(audio_station: StationHarness) -> None:
    ops = operator(audio_station)
    with running_stream_server(tone_then_silence(), RATE) as server:
        server.serve("/live", 503, 503, "stream")
        source_id = add_stream(ops, server, PASSWORD)
        with monitoring(audio_station) as monitor:
            wait_for(lambda: row(audio_station, source_id).state == "running", "running")
            history = monitor.runners[source_id][0].history
            assert history[0] == "starting" and history[-1] == "running"
            assert history.count("reconnecting") == 2
            assert server.count("/live") == 3


def test_a_receiver_command_feeds_the_monitor(audio_station: StationHarness) -> None:
    ops = operator(audio_station)
    body = {
        "name": "Stand-in receiver",
        "command": SINE_COMMAND,
        "device_params": {"sample_rate": 16000},
    }
    created = ops.request("POST", "/api/radio/receivers", json=body)
    assert created.status_code == 201, created.text
    source_id = created.json["id"]
    with monitoring(audio_station):
        wait_for(
            lambda: row(audio_station, source_id).level_dbfs is not None,
            "a level from the receiver",
        )
        level = row(audio_station, source_id).level_dbfs
        peak = row(audio_station, source_id).peak_dbfs
        assert row(audio_station, source_id).state == "running"
        # A sine of amplitude 8000/32768 is about -15.3 dBFS RMS and -12.2 dBFS at its peak.
        assert -17.0 < level < -13.5
        assert peak is not None and -13.5 < peak < -11.0
