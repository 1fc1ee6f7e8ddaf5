"""The rolling archive with real ffmpeg: segments, profiles, failures, retention, the API.

A stand-in receiver (a Python program writing PCM) feeds the monitor; the injected clock decides
when a segment ends. Waits use generous deadlines and assert no time.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from alertstation.audio import archive
from alertstation.audio.archive import (
    ArchiveRecorder,
    SegmentWriter,
    list_segments,
    source_folder,
)
from alertstation.audio.monitor import AudioMonitor, MonitorSettings
from alertstation.audio.profiles import DEFAULT_PROFILES
from alertstation.audio.settings import save_audio_settings
from alertstation.audio.tables import audio_sources
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from alertstation.worker.jobs import JOBS
from tests.audio.test_monitor import wait_for
from tests.audio.writers import SINE_COMMAND
from tests.support import SignedIn, StationHarness

RATE = 8000
FAST = MonitorSettings(
    sample_rate=RATE, persist_every=0.2, rescan_every=0.2, backoff_base=0.2, backoff_cap=1.0
)
OPUS = {
    "name": "voice-opus",
    "codec": "opus",
    "bitrate_kbps": 24,
    "sample_rate": 16000,
    "channels": 1,
}
DEFAULT_PROFILE = {
    "name": "archive-mp3",
    "codec": "mp3",
    "bitrate_kbps": 32,
    "sample_rate": 22050,
    "channels": 1,
}

needs_ffmpeg = pytest.mark.skipif(
    shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
    reason="ffmpeg is not installed",
)


def ffprobe(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [
            "ffprobe",
            "-v",
            "error",
            "-show_entries",
            "stream=codec_name,bit_rate,sample_rate,channels:format=duration",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found = json.loads(done.stdout)
    return {**found["streams"][0], "duration": float(found["format"]["duration"])}


def configure(station: StationHarness, **values: Any) -> None:
    with begin_write(station.engine) as conn:
        save_audio_settings(conn, values, by="test", now=station.clock())


def add_receiver(ops: SignedIn) -> int:
    body = {
        "name": "Stand-in receiver",
        "command": SINE_COMMAND,
        "device_params": {"sample_rate": 16000},
    }
    created = ops.request("POST", "/api/radio/receivers", json=body)
    assert created.status_code == 201, created.text
    return int(created.json["id"])


@contextmanager
def recording(station: StationHarness) -> Iterator[tuple[AudioMonitor, ArchiveRecorder]]:
    recorder = ArchiveRecorder(station.app.station, RATE, settings_seconds=0.0)
    stop = threading.Event()
    monitor = AudioMonitor(station.app.station, stop, FAST, listeners=[recorder])
    thread = threading.Thread(target=monitor.run, daemon=True)
    thread.start()
    try:
        yield monitor, recorder
    finally:
        stop.set()
        thread.join(timeout=90)
        assert not thread.is_alive()


def source_row(station: StationHarness, source_id: int) -> Any:
    with station.engine.connect() as conn:
        return conn.execute(select(audio_sources).where(audio_sources.c.id == source_id)).one()


def recording_now(recorder: ArchiveRecorder, source_id: int) -> bool:
    writer = recorder._writers.get(source_id)
    return writer is not None and writer.samples > RATE // 2


@needs_ffmpeg
def test_segments_follow_the_clock_and_the_profile(audio_station: StationHarness) -> None:
    audio_station.add_user("ops", "operator")
    ops = audio_station.sign_in("ops")
    data_dir = audio_station.app.station.settings.data_dir
    source_id = add_receiver(ops)
    configure(audio_station, archive_enabled=True, archive_segment_minutes=1)
    with recording(audio_station) as (_, recorder):
        wait_for(lambda: recording_now(recorder, source_id), "audio in the first segment")
        audio_station.clock.advance(minutes=1)  # the segment's minute is over
        wait_for(lambda: list_segments(data_dir, source_id), "the first segment completed")
        # A new profile: the segment under way ends and the next one uses it.
        wait_for(lambda: recording_now(recorder, source_id), "audio in the second segment")
        configure(
            audio_station,
            stream_profiles=[DEFAULT_PROFILE, OPUS],
            archive_profile="voice-opus",
        )
        wait_for(lambda: len(list_segments(data_dir, source_id)) >= 2, "the second segment")
        wait_for(lambda: recording_now(recorder, source_id), "audio in an opus segment")
    segments = list_segments(data_dir, source_id)  # newest first; the monitor stopped last
    kinds = [segment.extension for segment in segments]
    assert kinds[-2:] == ["mp3", "mp3"] and kinds[0] == "opus", kinds
    first = segments[-1]
    assert first.start == audio_station.clock.now.replace(microsecond=0) - timedelta(minutes=1)
    folder = source_folder(data_dir, source_id)
    mp3 = ffprobe(folder / first.name)
    assert mp3["duration"] > 0
    assert (mp3["codec_name"], mp3["bit_rate"], mp3["sample_rate"], mp3["channels"]) == (
        "mp3",
        "32000",
        "22050",
        1,
    )
    opus = ffprobe(folder / segments[0].name)
    assert opus["duration"] > 0 and (opus["codec_name"], opus["channels"]) == ("opus", 1)
    assert not list(folder.glob("*.part"))
    assert source_row(audio_station, source_id).archive_error is None


@needs_ffmpeg
def test_a_write_failure_never_stops_monitoring_and_the_next_segment_retries(
    audio_station: StationHarness,
) -> None:
    audio_station.add_user("ops", "operator")
    ops = audio_station.sign_in("ops")
    data_dir = audio_station.app.station.settings.data_dir
    source_id = add_receiver(ops)
    configure(audio_station, archive_enabled=True, archive_segment_minutes=1)
    blocker = source_folder(data_dir, source_id)
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the source's folder should be")
    with recording(audio_station) as (monitor, recorder):
        failed = wait_for(
            lambda: (
                (row := source_row(audio_station, source_id)).archive_failures
                and row.state == "running"
                and row
            ),
            "the archive failure on a running source",
        )
        assert "cannot write the archive" in failed.archive_error
        blocker.unlink()
        audio_station.clock.advance(minutes=1)  # the failed segment's minute is over: retry
        wait_for(lambda: recording_now(recorder, source_id), "audio in the next segment")
        audio_station.clock.advance(minutes=1)
        wait_for(lambda: list_segments(data_dir, source_id), "a segment after the failure")
        wait_for(
            lambda: source_row(audio_station, source_id).archive_error is None,
            "the error cleared",
        )
        runner = monitor.runners[source_id][0]
        assert runner.history == ["starting", "running"]  # monitoring never stopped
    shown = ops.request("GET", f"/api/audio/sources/{source_id}").json
    assert shown["archive_error"] is None and shown["archive_failures"] >= 1


def write_segment(folder: Path, start: Any, seconds: int = 600, ext: str = "mp3") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stamp = archive.STAMP
    name = f"{start.strftime(stamp)}-{(start + timedelta(seconds=seconds)).strftime(stamp)}.{ext}"
    path = folder / name
    path.write_bytes(b"ID3" + bytes(100))
    return path


def test_retention_deletes_old_segments_only_inside_the_archive(
    audio_station: StationHarness, tmp_path: Path
) -> None:
    station = audio_station.app.station
    now = audio_station.clock.now
    folder = source_folder(station.settings.data_dir, 7)
    old = write_segment(folder, now - timedelta(days=8))
    fresh = write_segment(folder, now - timedelta(days=6))
    stale_part = folder / f"{(now - timedelta(days=9)).strftime(archive.STAMP)}.mp3.part"
    stale_part.write_bytes(b"x")
    notes = folder / "notes.txt"
    notes.write_text("not a segment")
    outside = write_segment(tmp_path / "elsewhere", now - timedelta(days=30))
    link = folder / ("20000101T000000Z-20000101T001000Z.mp3")
    link.symlink_to(outside)
    job = next(job for job in JOBS if job.name == "audio-archive-retention")
    assert job.interval == 3600
    job.run(station)
    assert not old.exists() and not stale_part.exists()
    assert fresh.exists() and notes.exists() and outside.exists() and link.is_symlink()
    configure(audio_station, archive_retention_days=1)
    audio_station.clock.advance(days=1)
    job.run(station)
    assert not fresh.exists()


def test_the_archive_api_lists_downloads_deletes_and_refuses_traversal(
    audio_station: StationHarness,
) -> None:
    audio_station.add_user("ops", "operator")
    audio_station.add_user("watcher", "viewer")
    ops, viewer = audio_station.sign_in("ops"), audio_station.sign_in("watcher")
    data_dir = audio_station.app.station.settings.data_dir
    first = add_receiver(ops)
    body = {"name": "Second", "command": SINE_COMMAND}
    second = ops.request("POST", "/api/radio/receivers", json=body).json["id"]
    now = audio_station.clock.now
    segment = write_segment(source_folder(data_dir, first), now, seconds=90)
    other = write_segment(source_folder(data_dir, second), now - timedelta(hours=1))
    secret = data_dir / "secret.mp3"
    secret.write_bytes(b"secret")
    base = f"/api/audio/sources/{first}/archive"

    listed = viewer.request("GET", base)
    assert listed.status_code == 200, listed.text
    assert listed.json["archive_enabled"] is False
    assert listed.json["archive_profile"]["name"] == "archive-mp3"
    [item] = listed.json["items"]
    assert item["name"] == segment.name and item["duration_seconds"] == 90
    assert item["bytes"] == segment.stat().st_size and item["url"] == f"{base}/{segment.name}"

    got = viewer.request("GET", item["url"])
    assert got.status_code == 200
    assert got.content == segment.read_bytes() and got.headers["content-type"] == "audio/mpeg"
    assert got.headers["accept-ranges"] == "bytes"
    # A player seeks with byte ranges: a slice, an open end, a suffix; past the end is 416.
    whole, size = segment.read_bytes(), segment.stat().st_size
    for asked, first, last in (
        ("10-19", 10, 19),
        ("100-", 100, size - 1),
        ("-5", size - 5, size - 1),
    ):
        part = viewer.request("GET", item["url"], headers={"Range": f"bytes={asked}"})
        assert part.status_code == 206, (asked, part.text)
        assert part.headers["content-range"] == f"bytes {first}-{last}/{size}"
        assert part.content == whole[first : last + 1]
    beyond = viewer.request("GET", item["url"], headers={"Range": f"bytes={size}-"})
    assert beyond.status_code == 416
    assert beyond.headers["content-range"] == f"bytes */{size}"

    for name in (
        other.name,  # another source's segment
        "..%2Fsecret.mp3",
        "..%2F..%2Fsecret.mp3",
        "%2E%2E",
        "20261124T000000Z-20261124T001000Z.mp3",  # well formed, not there
        "notes.txt",
    ):
        refused = viewer.request("GET", f"{base}/{name}")
        assert refused.status_code == 404, (name, refused.status_code)
    assert ops.request("GET", "/api/audio/sources/999/archive").status_code == 404

    assert viewer.request("DELETE", item["url"]).status_code == 403
    assert audio_station.client.simulate_get(base).status_code == 401
    deleted = ops.request("DELETE", item["url"])
    assert deleted.status_code == 200, deleted.text
    assert not segment.exists() and other.exists() and secret.exists()
    assert ops.request("GET", base).json["items"] == []
    with audio_station.engine.connect() as conn:
        audit = conn.execute(select(audit_logs).where(audit_logs.c.target == "audio_archive")).one()
    assert json.loads(audit.details)["segment"] == segment.name

    page = ops.request("GET", "/audio")
    assert page.status_code == 200
    assert "The archive is off" in page.text
    configure(audio_station, archive_enabled=True)
    page = ops.request("GET", "/audio").text
    assert f"/api/audio/sources/{second}/archive/{other.name}" in page
    assert "No finished segment yet" in page  # the first source's only one was deleted


BAD_SETTINGS: list[tuple[dict[str, Any], str]] = [
    ({"stream_profiles": []}, "stream_profiles"),
    (
        {"stream_profiles": [{**OPUS, "codec": "flac"}]},
        "stream_profiles[0].codec",
    ),
    (
        {"stream_profiles": [{**DEFAULT_PROFILE, "bitrate_kbps": 8, "sample_rate": 44100}]},
        "stream_profiles[0].bitrate_kbps",
    ),
    (
        {"stream_profiles": [{**OPUS, "sample_rate": 22050}]},
        "stream_profiles[0].sample_rate",
    ),
    ({"stream_profiles": [{**OPUS, "channels": 3}]}, "stream_profiles[0].channels"),
    (
        {"stream_profiles": [{k: v for k, v in OPUS.items() if k != "channels"}]},
        "stream_profiles[0].channels",
    ),
    ({"stream_profiles": [{**OPUS, "name": "../x"}]}, "stream_profiles[0].name"),
    (
        {"stream_profiles": [OPUS, {**OPUS, "channels": 2}]},
        "stream_profiles[1].name",
    ),
    ({"archive_profile": "missing"}, "archive_profile"),
    ({"stream_profiles": [OPUS]}, "stream_profiles"),  # drops archive-mp3
    ({"archive_segment_minutes": 0}, "archive_segment_minutes"),
    ({"archive_enabled": "yes"}, "archive_enabled"),
]


def test_profiles_and_archive_settings_are_checked(audio_station: StationHarness) -> None:
    audio_station.add_user("ops", "operator")
    ops = audio_station.sign_in("ops")
    for change, field in BAD_SETTINGS:
        refused = ops.request("PUT", "/api/audio/settings", json={**change, "clipping_samples": 99})
        assert refused.status_code == 422, (change, refused.text)
        assert refused.json["error"]["details"]["field"] == field, change
    after = ops.request("GET", "/api/audio/settings").json
    assert after["clipping_samples"] == 10  # nothing half-done
    assert [p["name"] for p in after["stream_profiles"]] == ["archive-mp3"]


def test_profiles_are_saved_by_configure_only_and_audited_with_values(
    audio_station: StationHarness,
) -> None:
    audio_station.add_user("ops", "operator")
    audio_station.add_user("watcher", "viewer")
    ops, viewer = audio_station.sign_in("ops"), audio_station.sign_in("watcher")
    fresh = viewer.request("GET", "/api/audio/settings").json
    assert fresh["stream_profiles"] == [
        {
            "name": "archive-mp3",
            "codec": "mp3",
            "bitrate_kbps": 32,
            "sample_rate": 22050,
            "channels": 1,
        }
    ]
    assert (fresh["archive_profile"], fresh["archive_segment_minutes"]) == ("archive-mp3", 10)
    body = {
        "stream_profiles": [*fresh["stream_profiles"], {**OPUS, "channels": 2}],
        "archive_profile": "VOICE-OPUS",
        "archive_segment_minutes": 15,
    }
    assert viewer.request("PUT", "/api/audio/settings", json=body).status_code == 403
    saved = ops.request("PUT", "/api/audio/settings", json=body)
    assert saved.status_code == 200, saved.text
    assert saved.json["archive_profile"] == "voice-opus"  # the profile's own spelling
    assert saved.json["changed"] == [
        "archive_profile",
        "archive_segment_minutes",
        "stream_profiles",
    ]
    with audio_station.engine.connect() as conn:
        rows = conn.execute(select(audit_logs).where(audit_logs.c.target == "audio_settings")).all()
    (details,) = [json.loads(r.details) for r in rows]
    assert details["fields"] == ["archive_profile", "archive_segment_minutes", "stream_profiles"]
    assert details["changes"]["archive_profile"]["new"] == "voice-opus"  # old -> new values


def test_an_encoder_that_dies_fails_its_segment_and_leaves_no_partial_file(
    tmp_path: Path,
) -> None:
    reports: list[tuple[int, str | None]] = []
    start = datetime.now(UTC).replace(second=0, microsecond=0)
    writer = SegmentWriter(
        tmp_path / "3",
        3,
        start,
        start + timedelta(minutes=10),
        RATE,
        DEFAULT_PROFILES[0],
        shutil.which("false") or "/bin/false",
        lambda source_id, error: reports.append((source_id, error)),
    )
    for _ in range(50):
        writer.feed(np.full(800, 1000, dtype=np.int16))
    writer.finish()
    writer.thread.join(timeout=60)
    assert not writer.thread.is_alive()
    [(source_id, error)] = reports
    assert source_id == 3 and error is not None and "ffmpeg" in error
    assert list((tmp_path / "3").iterdir()) == []
