"""A receiver's arguments are read with its program's own option rules and held to a list."""

from __future__ import annotations

import json
import shlex
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
from sqlalchemy import Engine, select

from alertstation.app import create_app
from alertstation.audio.monitor import MonitorSettings, SourceRunner
from alertstation.audio.sources import SourceError, check_command
from alertstation.audio.tables import audio_sources
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from alertstation.settings import parse_receiver_allowlist
from alertstation.settings_admin import sections
from tests.support import Clock, StationHarness, clear_tables, make_settings

ARECORD = "/usr/bin/arecord"
RTL_FM = "/usr/local/bin/rtl_fm"
FFMPEG = "/usr/bin/ffmpeg"
SOX = "/usr/bin/sox"
RX = "/opt/rx/bin/rx"
ALLOWLIST = parse_receiver_allowlist(f"{ARECORD},{RTL_FM},{FFMPEG},{SOX},{RX} --band noaa,/bin/cat")
DEVICES = ["hw:1,0"]
RECEIVERS = "/api/radio/receivers"


@pytest.fixture
def radio_station(tmp_path: Path, engine: Engine) -> Iterator[StationHarness]:
    """The real app with the allowlist above and one capture device configured."""
    clock = Clock()
    url = engine.url.render_as_string(hide_password=False)
    settings = make_settings(tmp_path, url, receiver_allowlist=ALLOWLIST)
    app = create_app(settings, engine=engine, clock=clock)
    with begin_write(engine) as conn:
        sections.save(
            conn, sections.HARDWARE, {"capture_devices": DEVICES}, updated_by="admin", now=clock()
        )
    try:
        yield StationHarness(app, falcon.testing.TestClient(app), clock, engine)
    finally:
        clear_tables(engine)


REFUSED = [
    # arecord: an output file, a PID file (whole, abbreviated, after a cluster), other files
    [ARECORD, "-t", "raw", "/var/lib/alertstation/alertstation.db"],
    [ARECORD, "--process-id-file", "/tmp/x"],
    [ARECORD, "--process-id=/tmp/x"],
    [ARECORD, "--proc", "/tmp/x"],
    [ARECORD, "--max-file-time", "1"],
    [ARECORD, "--use-strftime"],
    [ARECORD, "-I"],
    [ARECORD, "-qI"],
    [ARECORD, "-", "extra"],
    [ARECORD, "-", "-q"],
    [ARECORD, "--", "-q"],
    # arecord: a device not configured, however it is written
    [ARECORD, "-qDnull"],
    [ARECORD, "--dev=null"],
    [ARECORD, "--devi", "null"],
    [ARECORD, "-D", "null"],
    [ARECORD, "--d=hw:1,0"],  # ambiguous (--device, --duration, --disable-*, --dump-hw-params)
    [ARECORD, "-D"],
    # rtl_fm: an output file, unknown options
    [RTL_FM, "-f", "162.55M", "/tmp/out.raw"],
    [RTL_FM, "-h"],
    [RTL_FM, "-v", "/tmp/out.raw"],
    # ffmpeg: files in and out, side files, filters
    [FFMPEG, "-f", "alsa", "-i", "hw:1,0", "-f", "s16le", "/tmp/out.raw"],
    [FFMPEG, "-f", "alsa", "-i", "hw:1,0", "-f", "s16le", "-", "-y", "/tmp/x"],
    [FFMPEG, "-report", "-f", "alsa", "-i", "hw:1,0", "-f", "s16le", "-"],
    [FFMPEG, "-i", "/etc/passwd", "-f", "s16le", "-"],
    [FFMPEG, "-f", "s16le", "-i", "/etc/passwd", "-f", "s16le", "-"],
    [FFMPEG, "-f", "alsa", "-i", "hw:1,0", "-af", "ametadata=file=/tmp/x", "-f", "s16le", "-"],
    [FFMPEG, "-f", "alsa", "-i", "hw:9,0", "-f", "s16le", "-"],
    [FFMPEG, "-f", "alsa", "-i", "hw:1,0", "-f", "wav", "-"],
    [FFMPEG, "-f", "alsa", "-i", "hw:1,0", "-progress", "/tmp/p", "-f", "s16le", "-"],
    # sox: an output file, file-writing effects, files read, devices not configured
    [SOX, "-d", "/tmp/out.wav"],
    [SOX, "-d", "-t", "raw", "-", "noiseprof", "/tmp/profile"],
    [SOX, "-d", "-t", "raw", "-", "rate", "16k", "spectrogram", "-o", "/tmp/x.png"],
    [SOX, "--effects-file", "/tmp/e", "-d", "-t", "raw", "-"],
    [SOX, "--effects", "/tmp/e", "-d", "-t", "raw", "-"],
    [SOX, "-t", "alsa", "hw:9,0", "-t", "raw", "-"],
    [SOX, "/etc/passwd", "-t", "raw", "-"],
    [SOX, "-d", "-d"],
    [SOX, "-qd", "-t", "alsa", "hw:1,0"],
    # other programs: only the arguments written beside them on the allowlist
    [RX, "--band", "noaa", "--out", "/tmp/x"],
    [RX],
    ["/bin/cat", "/etc/shadow"],
    ["/usr/bin/env", "sh"],
]

ACCEPTED = [
    [ARECORD, "-qDhw:1,0", "-f", "S16_LE", "-r", "24000", "-c1", "-t", "raw"],
    [ARECORD, "--dev=hw:1,0", "--form=S16_LE", "-t", "raw", "-"],
    [ARECORD, "-t", "raw"],
    [RTL_FM, "-f", "162.55M", "-M", "fm", "-s", "24k", "-E", "deemp", "-"],
    [RTL_FM, "-f162.4M", "-g", "40", "-T"],
    [
        FFMPEG,
        "-hide_banner",
        "-nostdin",
        "-f",
        "alsa",
        "-i",
        "hw:1,0",
        "-ac",
        "1",
        "-ar",
        "24000",
        "-c:a",
        "pcm_s16le",
        "-f",
        "s16le",
        "pipe:1",
    ],
    [SOX, "-q", "-t", "alsa", "hw:1,0", "-t", "raw", "-e", "signed", "-b", "16", "-c", "1", "-"],
    [SOX, "-d", "-t", "raw", "-r", "24k", "-", "rate", "-v", "24k", "gain", "-3", "remix", "1"],
    [RX, "--band", "noaa"],
    ["/bin/cat"],
]


@pytest.mark.parametrize("command", REFUSED, ids=shlex.join)
def test_arguments_outside_the_programs_rules_are_refused(command: list[str]) -> None:
    with pytest.raises(SourceError) as refused:
        check_command(command, ALLOWLIST, DEVICES)
    assert refused.value.field == "command"


@pytest.mark.parametrize("command", ACCEPTED, ids=shlex.join)
def test_arguments_within_the_programs_rules_are_accepted(command: list[str]) -> None:
    assert check_command(command, ALLOWLIST, DEVICES) == tuple(command)


def test_the_allowlist_reads_entries_with_their_arguments() -> None:
    assert ALLOWLIST[4] == "/opt/rx/bin/rx --band noaa"
    assert parse_receiver_allowlist("/opt/rx 'a b', /opt/rx 'a b'") == ("/opt/rx 'a b'",)


def test_the_audit_row_records_the_command(radio_station: StationHarness) -> None:
    radio_station.add_user("ops", "operator")
    ops = radio_station.sign_in("ops")
    command = [ARECORD, "-D", "hw:1,0", "-t", "raw"]
    created = ops.request("POST", RECEIVERS, json={"name": "WX", "command": command})
    assert created.status_code == 201, created.text
    refused = ops.request(
        "PUT", f"{RECEIVERS}/{created.json['id']}", json={"command": [ARECORD, "--proc=/tmp/x"]}
    )
    assert refused.status_code == 422
    moved = [ARECORD, "-t", "raw"]
    ops.request("PUT", f"{RECEIVERS}/{created.json['id']}", json={"command": moved})
    with radio_station.engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.details).where(audit_logs.c.target == "audio")
        ).all()
    details = [
        json.loads(row.details) if isinstance(row.details, str) else row.details for row in rows
    ]
    assert [d.get("command") for d in details] == [command, moved]


def test_an_operator_cannot_change_the_capture_devices(radio_station: StationHarness) -> None:
    radio_station.add_user("ops", "operator")
    radio_station.add_user("boss", "admin")
    ops = radio_station.sign_in("ops")
    refused = ops.request("PUT", "/api/settings/hardware", json={"capture_devices": ["null"]})
    assert refused.status_code == 403, refused.text
    assert refused.json["error"]["details"]["field"] == "capture_devices"
    with radio_station.engine.connect() as conn:
        assert sections.hardware_settings(conn)["capture_devices"] == DEVICES
    unchanged = ops.request(
        "PUT", "/api/settings/hardware", json={"capture_devices": DEVICES, "relay_pins": [17]}
    )
    assert unchanged.status_code == 200, unchanged.text
    admin = radio_station.sign_in("boss")
    added = admin.request("PUT", "/api/settings/hardware", json={"capture_devices": ["hw:2,0"]})
    assert added.status_code == 200, added.text
    hint = "Only an admin changes the capture devices."
    assert hint in ops.request("GET", "/admin/settings").text
    assert hint not in admin.request("GET", "/admin/settings").text


def test_the_monitor_checks_the_allowlist_before_every_spawn(
    radio_station: StationHarness, tmp_path: Path
) -> None:
    marker = tmp_path / "spawned"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    with begin_write(radio_station.engine) as conn:
        conn.execute(
            audio_sources.insert().values(
                name="Stored before the allowlist narrowed",
                kind="receiver",
                url="",
                command=json.dumps(command),
                device_params=json.dumps({"sample_rate": 8000, "channels": 1}),
                enabled=True,
                relay_enabled=False,
                state="starting",
                created_at=radio_station.clock(),
                updated_at=radio_station.clock(),
                state_changed_at=radio_station.clock(),
            )
        )
        source_id = conn.execute(select(audio_sources.c.id)).scalar_one()
    station: Any = radio_station.app.station  # its allowlist does not hold this command
    stop = threading.Event()
    runner = SourceRunner(station, source_id, stop, MonitorSettings(rescan_every=0.2), None)  # type: ignore[arg-type]
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        end = time.monotonic() + 60
        while "fatal" not in runner.history and time.monotonic() < end:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert "fatal" in runner.history
    with radio_station.engine.connect() as conn:
        row = conn.execute(select(audio_sources).where(audio_sources.c.id == source_id)).one()
    assert row.state == "fatal" and "receiver refused" in row.error_message
    assert not marker.exists(), "the program was started"
