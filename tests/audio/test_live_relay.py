"""A national message is relayed live: a received NPT airs while its source still plays it.

A throwaway icecast2 (``tests.icecast``) carries two mounts: ``/source.mp3``, which ffmpeg
feeds at real time with silence and then a National Periodic Test (header, a tone, EOM), and
``/air.mp3``, the station's Icecast output. The station's audio monitor listens to the source
mount; the airing loop runs beside it. The order of events is asserted, never a time: the relay's
first audio goes out before the station hears the received message's EOM, and the archive holds
the relayed audio with the station's one EOM (the source's EOM never reaches the air).
SQLite only: the live path does not depend on the backend.
"""

from __future__ import annotations

import http.client
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from alertstation.alerts.service import set_alert_settings
from alertstation.app import create_app
from alertstation.audio.monitor import AudioMonitor
from alertstation.audio.same_monitor import SameMonitor
from alertstation.audio.sources import SourceConfig, create_source
from alertstation.audio.tables import audio_sources, received_eas_messages
from alertstation.context import Station
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from alertstation.eas import archive
from alertstation.eas.airing import onair
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.queue import get_item
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.audio import read_wav, render_message
from alertstation.eas.decode import decode_pcm
from alertstation.same import SameHeader
from tests.audio.test_monitor import FAST
from tests.eas.test_multimon import require_tool
from tests.icecast import IcecastServer, icecast_server, stop
from tests.processes import DEADLINE, wait_until
from tests.support import Clock, create_database, make_settings

SOURCE_MOUNT = "/source.mp3"
AIR_MOUNT = "/air.mp3"
RATE = 22050
MONITOR = replace(FAST, sample_rate=RATE)
CHUNK = RATE // 10
BODY_SECONDS = 10.0


class Events:
    """What happened, in order (appended from the monitor, airing and test threads)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, event: str) -> None:
        with self._lock:
            self.items.append(event)

    def index(self, event: str) -> int:
        with self._lock:
            assert event in self.items, self.items
            return self.items.index(event)


class HearingMonitor(SameMonitor):
    """The station's SAME monitor, telling the test when it decodes a header or an EOM."""

    def __init__(self, station: Station, events: Events) -> None:
        super().__init__(station, RATE)
        self.events = events

    def _decoded(self, source_id: int, state: Any, item: Any) -> None:
        self.events(f"heard_{item.kind}")
        super()._decoded(source_id, state, item)


class SourcePlayer(threading.Thread):
    """Feed ffmpeg (which streams to the source mount) at real time: silence, then on ``go``
    the message once, then silence until ``done``."""

    def __init__(self, server: IcecastServer, message: np.ndarray) -> None:
        super().__init__(daemon=True)
        self.message = message
        self.go = threading.Event()
        self.done = threading.Event()
        self.process = subprocess.Popen(
            [require_tool("ffmpeg"), "-hide_banner", "-loglevel", "error"]
            + ["-f", "s16le", "-ar", str(RATE), "-ac", "1", "-i", "pipe:0"]
            + ["-c:a", "libmp3lame", "-b:a", "64k", "-content_type", "audio/mpeg", "-f", "mp3"]
            + [f"icecast://source:{server.password}@127.0.0.1:{server.port}{SOURCE_MOUNT}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def run(self) -> None:
        assert self.process.stdin is not None
        silence = np.zeros(CHUNK, dtype="<i2").tobytes()
        pending = b""
        started = time.monotonic()
        sent = 0
        try:
            while not self.done.is_set():
                if self.go.is_set() and self.message is not None:
                    pending, self.message = self.message.astype("<i2").tobytes(), None
                chunk, pending = (
                    (pending[: 2 * CHUNK], pending[2 * CHUNK :])
                    if pending
                    else (
                        silence,
                        b"",
                    )
                )
                self.process.stdin.write(chunk)
                self.process.stdin.flush()
                sent += len(chunk) // 2
                ahead = started + sent / RATE - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
        except (BrokenPipeError, ValueError):
            pass
        finally:
            self.process.stdin.close()
            stop(self.process)


def mount_up(server: IcecastServer, mount: str) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", mount)
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


@pytest.fixture
def station(tmp_path: Path) -> Iterator[Station]:
    url = create_database("sqlite", tmp_path)
    engine = make_engine(url)
    upgrade_to_head(engine)
    try:
        yield create_app(make_settings(tmp_path, url), engine=engine, clock=Clock()).station
    finally:
        engine.dispose()


def source_message(station: Station) -> tuple[str, np.ndarray]:
    header = SameHeader.build("PEP", "NPT", ["000000"], (0, 15), "KXYZ/NWS", issued=station.clock())
    tone = 0.3 * np.sin(2 * np.pi * 440.0 * np.arange(round(BODY_SECONDS * RATE)) / RATE)
    body = (tone * 32767).astype(np.int16)
    samples = render_message(header, sample_rate=RATE, attention_seconds=0.0, voice=body)
    return header.encode(), samples


def test_a_received_npt_is_relayed_live_before_its_eom(station: Station) -> None:
    received_header, samples = source_message(station)
    events = Events()
    with icecast_server("alertstation-live-relay-") as server:
        with begin_write(station.engine) as conn:
            set_alert_settings(conn, zone_codes=["039173"])
            settings_airing.save(
                conn,
                {
                    "icecast_enabled": True,
                    "icecast_host": "127.0.0.1",
                    "icecast_port": server.port,
                    "icecast_mount": AIR_MOUNT,
                    "icecast_password": server.password,
                },
                updated_by="test",
                now=station.clock(),
            )
        player = SourcePlayer(server, samples)
        player.start()
        stop_all = threading.Event()
        monitor_thread: threading.Thread | None = None
        airing_thread: threading.Thread | None = None
        try:
            wait_until(lambda: mount_up(server, SOURCE_MOUNT), "the source mount", None, DEADLINE)
            config = SourceConfig(
                name="Relay source", kind="stream", url=server.url(SOURCE_MOUNT), relay_enabled=True
            )
            with begin_write(station.engine) as conn:
                source_id = create_source(conn, config, station.clock())
            same = HearingMonitor(station, events)
            monitor = AudioMonitor(station, stop_all, MONITOR, listeners=[same])
            monitor_thread = threading.Thread(target=monitor.run, daemon=True)
            monitor_thread.start()

            def airing() -> None:
                while not stop_all.is_set():
                    if onair.run_once(station, cancel=stop_all, trace=events):
                        events("airing_done")
                        return
                    stop_all.wait(0.2)

            airing_thread = threading.Thread(target=airing, daemon=True)
            airing_thread.start()

            def running() -> bool:
                with station.engine.connect() as conn:
                    state = conn.execute(
                        select(audio_sources.c.state).where(audio_sources.c.id == source_id)
                    ).scalar()
                return state == "running"

            wait_until(running, "the source running", None, DEADLINE)
            player.go.set()
            wait_until(
                lambda: "airing_done" in events.items,
                f"the relay to end: {events.items}",
                None,
                180,
            )
        finally:
            stop_all.set()
            player.done.set()
            for thread in (player, monitor_thread, airing_thread):
                if thread is not None:
                    thread.join(timeout=60)

    # The relay's first audio went out while the source was still playing the message.
    assert events.index("heard_header") < events.index("first_audio:icecast")
    assert events.index("first_audio:icecast") < events.index("heard_eom")

    with station.engine.connect() as conn:
        (queued,) = conn.execute(select(eas_airing_queue)).all()
        item = get_item(conn, queued.id)
        received = conn.execute(select(received_eas_messages)).one()
        row = archive.get_row(conn, item.archive_id)
    assert item is not None and item.origin == "relay"
    assert item.state == "aired", item.error
    assert {o["name"]: o["ok"] for o in item.outputs} == {"archive": True, "icecast": True}
    assert all(o["started_at"] and o["ended_at"] for o in item.outputs)
    assert received.header == received_header and received.relay.startswith("relayed live as")
    assert item.header.startswith("ZCZC-PEP-NPT-000000+0015-")

    # The archive holds what aired: the station's header, the live audio, one EOM (the
    # source's own EOM was held back and never relayed).
    kept = read_wav(archive.wav_file(station.settings.data_dir, row.wav_path))
    decoded = decode_pcm(kept.samples, kept.sample_rate)
    assert [d.text for d in decoded if d.kind == "header"] == [item.header]
    assert [d.kind for d in decoded].count("eom") == 1
    assert row.duration == pytest.approx(kept.samples.size / kept.sample_rate, abs=0.01)
    assert row.duration > BODY_SECONDS + 8.0  # header, attention signal and the tone
