"""Aired speech uses the voice, rate and volume saved on the settings page.

espeak-ng runs for real, behind a wrapper that notes its arguments: manual EAS, auto-forward
and the settings page's preview must all speak through the one espeak-ng call with the saved
values.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from alertstation.db.engine import begin_write
from alertstation.eas import voice
from alertstation.eas.forward.service import process_queue
from alertstation.settings_admin import sections
from tests.eas.test_forward import tornado
from tests.eas.test_forward_support import airings, configure, ingest
from tests.support import StationHarness, pg_required

SAVED = ["-v", "en-gb", "-s", "210", "-a", "60"]


@pytest.fixture
def espeak_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the real espeak-ng through a wrapper that writes its arguments to a log."""
    real = shutil.which("espeak-ng")
    if real is None:
        if pg_required():
            pytest.fail("espeak-ng is required: run scripts/install-test-deps.sh")
        pytest.skip("espeak-ng is not installed")
    log = tmp_path / "espeak-args.log"
    wrapper = tmp_path / "espeak-ng"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(voice, "espeak_path", lambda: str(wrapper))
    return log


def save_voice(station: StationHarness) -> None:
    with begin_write(station.engine) as conn:
        sections.save(
            conn,
            sections.TTS,
            {"voice": "en-gb", "rate": 210, "volume": 60},
            updated_by="test",
            now=station.clock(),
        )


def runs(log: Path) -> list[list[str]]:
    """Return the voice, rate and volume options of each espeak-ng run."""
    found = []
    for line in log.read_text().splitlines():
        words = line.split()
        found.append(words[: words.index("-b")])
    return found


def test_manual_eas_speaks_in_the_saved_voice(station: StationHarness, espeak_log: Path) -> None:
    save_voice(station)
    station.add_user("ops", "operator")
    operator = station.sign_in("ops")
    created = operator.request(
        "POST",
        "/eas/manual/events",
        json={"event": "RWT", "locations": "051059", "purge": "0030", "voice_text": "A test."},
    )
    assert created.status_code == 201, created.text
    audio = operator.request("GET", created.json["activation"]["audio_url"])
    assert audio.status_code == 200, audio.text
    assert runs(espeak_log) == [SAVED]


def test_forwarded_alerts_speak_in_the_saved_voice(
    station: StationHarness, espeak_log: Path
) -> None:
    save_voice(station)
    st = station.app.station
    configure(st, include_voice=True)
    ingest(st, tornado(station), station.clock.now)
    (outcome,) = process_queue(st)
    assert outcome.outcome == "aired"
    (record,) = airings(station.engine)
    assert record.voice == "spoken"
    assert runs(espeak_log) == [SAVED]


def test_the_preview_runs_the_same_espeak_call(station: StationHarness, espeak_log: Path) -> None:
    save_voice(station)
    station.add_user("boss", "admin")
    admin = station.sign_in("boss")
    preview = admin.request("POST", "/api/settings/tts/preview", json={})
    assert preview.status_code == 200, preview.text
    assert runs(espeak_log) == [SAVED]


def test_volume_scales_the_aired_speech(espeak_log: Path) -> None:
    full = voice.synthesize("Take shelter now.", 8000)
    half = voice.synthesize("Take shelter now.", 8000, volume=50)
    loud = voice.synthesize("Take shelter now.", 8000, volume=200)
    assert np.max(np.abs(full)) == pytest.approx(voice.PEAK)
    assert np.max(np.abs(half)) == pytest.approx(voice.PEAK / 2)
    assert np.max(np.abs(loud)) == pytest.approx(voice.PEAK)  # never past the normalised peak
