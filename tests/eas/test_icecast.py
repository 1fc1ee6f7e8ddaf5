"""The Icecast output against a real Icecast server (Debian's icecast2) on loopback.

A throwaway server (``tests.icecast``) runs from a private configuration on a free port. A
message aired through the queue is streamed to a mount; a listener pulls the mount over HTTP at
the same time, ffmpeg decodes the MP3 it received to PCM, and both multimon-ng and the station's
own decoder must find exactly the header that was sent.
"""

from __future__ import annotations

import http.client
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from alertstation.app import create_app
from alertstation.context import Station
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from alertstation.eas.airing import onair
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.outputs.icecast import (
    IcecastError,
    IcecastOutput,
    IcecastTarget,
    Mp3Framer,
    bitrate_for,
    connect_source,
)
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.archive import AiredMessage
from alertstation.eas.audio import render_message
from alertstation.eas.decode import decode_pcm
from alertstation.same import SameHeader
from tests.eas.airing_support import queue_message
from tests.eas.test_multimon import MULTIMON_RATE, multimon, require_tool
from tests.icecast import IcecastServer, icecast_server
from tests.support import Clock, create_database, make_settings

MOUNT = "/eas.mp3"


def target(server: IcecastServer, mount: str = MOUNT, password: str | None = None) -> IcecastTarget:
    """Where the station's Icecast output streams to on ``server``."""
    return IcecastTarget(
        "127.0.0.1", server.port, mount, "source", server.password if password is None else password
    )


@pytest.fixture(scope="module")
def icecast() -> Iterator[IcecastServer]:
    """Start a private icecast2 on a free loopback port; stop it and remove its files after."""
    with icecast_server() as server:
        yield server


class Listener(threading.Thread):
    """Poll a mount until it exists, then record everything it streams until it ends."""

    def __init__(self, port: int, mount: str, *, delay: float = 0.0, timeout: float = 60.0) -> None:
        super().__init__(daemon=True)
        self.port, self.mount, self.delay, self.timeout = port, mount, delay, timeout
        self.data = b""
        self.content_type: str | None = None
        self.error: str | None = None

    def run(self) -> None:
        time.sleep(self.delay)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
            try:
                conn.request("GET", self.mount)
                response = conn.getresponse()
                if response.status == 200:
                    self.content_type = response.getheader("Content-Type")
                    chunks = []
                    while chunk := response.read1(65536):
                        chunks.append(chunk)
                    self.data = b"".join(chunks)
                    return
                response.read()
            except OSError as ex:
                self.error = repr(ex)
            finally:
                conn.close()
            time.sleep(0.05)
        self.error = self.error or "the mount never appeared"


def mp3_to_pcm(data: bytes, rate: int = MULTIMON_RATE) -> np.ndarray:
    """Decode MP3 bytes to mono int16 PCM at ``rate`` with ffmpeg."""
    ffmpeg = require_tool("ffmpeg")
    result = subprocess.run(
        [ffmpeg, "-hide_banner", "-loglevel", "error", "-f", "mp3", "-i", "pipe:0"]
        + ["-f", "s16le", "-ac", "1", "-ar", str(rate), "pipe:1"],
        input=data,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return np.frombuffer(result.stdout, dtype="<i2")


@pytest.fixture
def station(tmp_path: Path) -> Iterator[Station]:
    """A station on its own SQLite database: the stream does not depend on the backend (the
    queue itself is tested on both in test_airing)."""
    url = create_database("sqlite", tmp_path)
    engine = make_engine(url)
    upgrade_to_head(engine)
    try:
        yield create_app(make_settings(tmp_path, url), engine=engine, clock=Clock()).station
    finally:
        engine.dispose()


def test_a_message_aired_through_icecast_decodes_exactly(
    station: Station, icecast: IcecastServer
) -> None:
    header = SameHeader.parse("ZCZC-EAS-RWT-051059-051107+0030-3251200-WXYZ/FM -").encode()
    samples = render_message(header, sample_rate=22050, attention_seconds=0.0)
    with begin_write(station.engine) as conn:
        settings_airing.save(
            conn,
            {
                "icecast_enabled": True,
                "icecast_host": "127.0.0.1",
                "icecast_port": icecast.port,
                "icecast_mount": MOUNT,
                "icecast_password": icecast.password,
            },
            updated_by="test",
            now=station.clock(),
        )
    queued = queue_message(station, AiredMessage(header, samples, 22050), aired_by="ops")

    listener = Listener(icecast.port, MOUNT)
    # Joins after the first header began (2 s of lead-in); burst-on-connect covers it.
    late = Listener(icecast.port, MOUNT, delay=2.5)
    listener.start()
    late.start()
    assert onair.run_once(station)
    for thread in (listener, late):
        thread.join(timeout=60)
        assert not thread.is_alive()

    with station.engine.connect() as conn:
        item = conn.execute(
            select(eas_airing_queue).where(eas_airing_queue.c.id == queued["queue"]["id"])
        ).one()
    assert item.state == "aired", f"{item.error}\n{icecast.log()}"
    for received in (listener, late):
        assert received.data, received.error
        assert received.content_type == "audio/mpeg"
        pcm = mp3_to_pcm(received.data)
        lines = multimon(pcm)
        assert [line for line in lines if line != "EAS: NNNN"] == [f"EAS: {header}"]
        assert lines.count("EAS: NNNN") == 3
        ours = decode_pcm(pcm, MULTIMON_RATE)
        assert [d.text for d in ours if d.kind == "header"] == [header]
        assert [(d.kind, d.bursts) for d in ours if d.kind == "eom"] == [("eom", 3)]


def test_a_wrong_source_password_is_a_clear_error(icecast: IcecastServer) -> None:
    output = IcecastOutput(target(icecast, password="not-the-password"))
    message = AiredMessage("ZCZC-EAS-RWT-051059+0030-3251200-WXYZ/FM -", np.zeros(800, "<i2"), 8000)
    with pytest.raises(IcecastError) as caught:
        output.play(message)
    text = str(caught.value)
    assert "401" in text and "password" in text and f"127.0.0.1:{icecast.port}" in text
    assert "not-the-password" not in text


def test_a_mount_in_use_is_a_clear_error(icecast: IcecastServer) -> None:
    first = connect_source(target(icecast, "/busy.mp3"))
    try:
        with pytest.raises(IcecastError, match=r"mount /busy\.mp3 is in use"):
            connect_source(target(icecast, "/busy.mp3"))
    finally:
        first.close()


@pytest.mark.parametrize("rate", [8000, 22050, 48000])
def test_the_framer_splits_ffmpeg_mp3_into_whole_frames(rate: int) -> None:
    ffmpeg = require_tool("ffmpeg")
    seconds = 3
    pcm = (0.3 * np.sin(2 * np.pi * 1000 * np.arange(seconds * rate) / rate) * 32767).astype("<i2")
    encoded = subprocess.run(
        [ffmpeg, "-hide_banner", "-loglevel", "error", "-f", "s16le", "-ar", str(rate)]
        + ["-ac", "1", "-i", "pipe:0", "-c:a", "libmp3lame", "-b:a", f"{bitrate_for(rate)}k"]
        + ["-write_xing", "0", "-id3v2_version", "0", "-f", "mp3", "pipe:1"],
        input=pcm.tobytes(),
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    framer = Mp3Framer()
    frames = []
    for start in range(0, len(encoded), 1000):  # fed in pieces that cut frames apart
        frames.extend(framer.feed(encoded[start : start + 1000]))
    assert b"".join(frame.data for frame in frames) == encoded
    per_frame = 1152 if rate >= 32000 else 576
    assert {frame.seconds for frame in frames} == {per_frame / rate}
    # The encoder adds at most a couple of frames of delay and padding.
    assert seconds <= sum(frame.seconds for frame in frames) <= seconds + 3 * per_frame / rate
