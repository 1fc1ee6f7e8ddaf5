"""The audio monitor against a real Icecast (Debian's icecast2) whose mount needs a listener login.

A private icecast2 on a free loopback port (``tests.icecast``) protects the
mount ``/wx.mp3`` with Icecast's own mount authentication (an htpasswd file). ffmpeg feeds it,
looping, a WAV of espeak-ng speech, 10 s of silence and a header rendered by our encoder. With
the right credentials the source runs, the header reaches ``/api/eas/received`` and a silence
alert opens and ends; with a wrong password it goes fatal with the status and is not retried.
Waits have generous deadlines and assert no time.
"""

from __future__ import annotations

import logging
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from alertstation.audio.tables import audio_alerts, audio_sources
from alertstation.audit.tables import audit_logs
from alertstation.eas.audio import render_message, write_wav
from tests.audio.test_monitor import monitoring, operator, wait_for
from tests.eas.test_multimon import require_tool
from tests.icecast import IcecastServer, ListenerLogin, icecast_server, stop
from tests.support import StationHarness

MOUNT = "/wx.mp3"
RATE = 22050
LISTENER = "monitor"
LISTENER_PASSWORD = "Ice-Listener-Pa55-" + secrets.token_hex(4)
HEADER = "ZCZC-WXR-SVR-039173+0030-3281720-KXYZ/NWS-"

LOGIN = ListenerLogin(MOUNT, LISTENER, LISTENER_PASSWORD)


def programme(folder: Path) -> Path:
    """Write speech, 10 s of silence and a rendered header message as one WAV."""
    speech_file = folder / "speech.wav"
    subprocess.run(
        [
            require_tool("espeak-ng"),
            "-w",
            str(speech_file),
            "This is a test of the station's audio monitor. Weather radio follows.",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    decoded = subprocess.run(
        [require_tool("ffmpeg"), "-v", "error", "-i", str(speech_file)]
        + ["-ac", "1", "-ar", str(RATE), "-f", "s16le", "pipe:1"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    speech16 = np.frombuffer(decoded.stdout, dtype="<i2").astype(np.int16)
    message = render_message(HEADER, sample_rate=RATE, attention_seconds=8.0)
    silence = np.zeros(10 * RATE, dtype=np.int16)
    pcm = np.concatenate([speech16, silence, message, np.zeros(2 * RATE, np.int16)])
    path = folder / "programme.wav"
    write_wav(path, pcm, RATE)
    return path


@pytest.fixture(scope="module")
def icecast() -> Iterator[IcecastServer]:
    """Run icecast2 with a protected mount and an ffmpeg source looping the programme."""
    ffmpeg = require_tool("ffmpeg")
    with icecast_server("alertstation-audio-icecast-", protected=LOGIN) as server:
        wav = programme(server.folder)
        source = subprocess.Popen(
            [
                ffmpeg,
                "-hide_banner",
                "-loglevel",
                "error",
                "-re",
                "-stream_loop",
                "-1",
                "-i",
                str(wav),
                "-c:a",
                "libmp3lame",
                "-b:a",
                "64k",
                "-content_type",
                "audio/mpeg",
                "-f",
                "mp3",
                f"icecast://source:{server.password}@127.0.0.1:{server.port}{MOUNT}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield server
        finally:
            stop(source)


def add(ops: Any, url: str, password: str) -> int:
    body = {
        "name": "Protected Icecast",
        "kind": "stream",
        "url": url,
        "device_params": {"auth_username": LISTENER, "auth_password": password},
        "skip_url_check": True,
    }
    created = ops.request("POST", "/api/audio/sources", json=body)
    assert created.status_code == 201, created.text
    return int(created.json["id"])


def source_row(station: StationHarness, source_id: int) -> Any:
    with station.engine.connect() as conn:
        return conn.execute(select(audio_sources).where(audio_sources.c.id == source_id)).one()


def test_a_protected_mount_runs_with_the_right_credentials(
    icecast: IcecastServer, audio_station: StationHarness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    ops = operator(audio_station)
    test = ops.request(
        "POST",
        "/api/audio/sources/test-stream",
        json={"url": icecast.url(MOUNT), "device_params": {"auth_username": LISTENER}},
    )
    assert test.json["status"] == 401, (test.json, icecast.log())
    source_id = add(ops, icecast.url(MOUNT), LISTENER_PASSWORD)
    with monitoring(audio_station):
        wait_for(lambda: source_row(audio_station, source_id).state == "running", "running")

        def header_heard() -> list[dict[str, Any]]:
            items = ops.request("GET", "/api/eas/received").json["items"]
            return [item for item in items if item["header"] == HEADER]

        wait_for(header_heard, "the header in /api/eas/received", deadline=180)

        def silence_ended() -> bool:
            with audio_station.engine.connect() as conn:
                rows = conn.execute(
                    select(audio_alerts).where(
                        audio_alerts.c.kind == "silence", audio_alerts.c.source_id == source_id
                    )
                ).all()
            return any(row.ended_at is not None for row in rows)

        wait_for(silence_ended, "a silence alert that opens and ends", deadline=180)
    responses = [
        ops.request("GET", "/api/audio/sources").text,
        ops.request("GET", f"/api/audio/sources/{source_id}").text,
        ops.request("GET", "/api/audio/alerts", params={"state": "all"}).text,
    ]
    with audio_station.engine.connect() as conn:
        audit = " ".join(str(row._asdict()) for row in conn.execute(select(audit_logs)))
    for text in [*responses, audit, caplog.text]:
        assert LISTENER_PASSWORD not in text


def test_a_wrong_password_is_fatal_and_not_retried(
    icecast: IcecastServer, audio_station: StationHarness
) -> None:
    ops = operator(audio_station)
    source_id = add(ops, icecast.url(MOUNT), "not-the-password")
    with monitoring(audio_station) as monitor:
        fatal = wait_for(
            lambda: (row := source_row(audio_station, source_id)).state == "fatal" and row,
            "fatal",
        )
        assert "401" in fatal.error_message
        time.sleep(5)
        runner = monitor.runners[source_id][0]
        assert runner.history == ["starting", "fatal"]
        assert source_row(audio_station, source_id).state == "fatal"
