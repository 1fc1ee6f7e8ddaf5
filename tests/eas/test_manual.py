"""Manual EAS activations: create, preview, send into the archive, purge; audit rules."""

from __future__ import annotations

import io
import json
import logging
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from alertstation.audit.tables import audit_logs
from alertstation.eas import voice
from alertstation.eas.audio import decode_wav
from alertstation.eas.tables import eas_activations, eas_archive
from alertstation.same import SameHeader
from tests.support import SignedIn, StationHarness

RWT = {"event": "RWT", "locations": "051059, 051107", "purge": "0030", "station_id": "WXYZ/FM"}
BOUNDARY = "eas-manual-test-boundary"


def tone_wav(seconds: float = 0.5, rate: int = 8000) -> bytes:
    """Return the bytes of a short 16-bit mono WAV (a 440 Hz tone)."""
    t = np.arange(int(seconds * rate)) / rate
    samples = (0.3 * np.sin(2 * np.pi * 440 * t) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return buffer.getvalue()


def multipart(fields: dict[str, str], audio: bytes | None) -> tuple[bytes, dict[str, str]]:
    """Encode form fields and an optional ``audio`` file as multipart/form-data."""
    chunks: list[bytes] = []
    for name, value in fields.items():
        disposition = f'Content-Disposition: form-data; name="{name}"'
        chunks.append(f"--{BOUNDARY}\r\n{disposition}\r\n\r\n{value}\r\n".encode())
    if audio is not None:
        chunks.append(
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="audio"; '
            'filename="voice.wav"\r\nContent-Type: audio/wav\r\n\r\n'.encode()
            + audio
            + b"\r\n"
        )
    chunks.append(f"--{BOUNDARY}--\r\n".encode())
    return b"".join(chunks), {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


@pytest.fixture
def operator(station: StationHarness) -> SignedIn:
    station.add_user("ops", "operator")
    return station.sign_in("ops")


def create(client: SignedIn, **overrides: Any) -> dict[str, Any]:
    result = client.request("POST", "/eas/manual/events", json={**RWT, **overrides})
    assert result.status_code == 201, result.text
    return result.json["activation"]


def audit_rows(station: StationHarness, action: str) -> list[Any]:
    with station.engine.connect() as conn:
        query = select(audit_logs).where(audit_logs.c.action == action).order_by(audit_logs.c.id)
        return list(conn.execute(query))


def test_create_lists_and_renders_a_draft(station: StationHarness, operator: SignedIn) -> None:
    activation = create(operator)
    assert activation["event"] == "RWT"
    assert activation["locations"] == ["051059", "051107"]
    assert activation["state"] == "draft"
    assert activation["created_by"] == "ops"
    assert activation["station_id"] == "WXYZ/FM"

    listed = operator.request("GET", "/eas/manual/events").json["activations"]
    assert [item["id"] for item in listed] == [activation["id"]]

    audio = operator.request("GET", activation["audio_url"])
    assert audio.status_code == 200
    assert audio.headers["content-type"] == "audio/wav"
    decoded = decode_wav(audio.content)
    assert decoded.sample_rate == 22050
    assert 5 < decoded.samples.size / decoded.sample_rate < 15  # a weekly test has no tone


def test_station_id_and_originator_default(operator: SignedIn) -> None:
    activation = create(operator, station_id="", org=None)
    assert activation["station_id"] == "ALRTSTN"
    assert activation["org"] == "EAS"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"event": "XXX"}, "event"),
        ({"org": "ABC"}, "org"),
        ({"locations": ""}, "locations"),
        ({"locations": "12345"}, "locations"),
        ({"locations": "099001"}, "locations"),
        ({"locations": " ".join(f"0510{i:02d}" for i in range(32))}, "locations"),
        ({"purge": "0020"}, "purge"),
        ({"purge": "1h"}, "purge"),
        ({"station_id": "BAD-ID"}, "station_id"),
        ({"station_id": "TOOLONGID"}, "station_id"),
        ({"voice_text": 5}, "voice_text"),
    ],
)
def test_invalid_fields_are_422_naming_the_field(
    station: StationHarness, operator: SignedIn, overrides: dict[str, Any], field: str
) -> None:
    result = operator.request("POST", "/eas/manual/events", json={**RWT, **overrides})
    assert result.status_code == 422, result.text
    assert result.json["error"]["details"]["field"] == field
    with station.engine.connect() as conn:
        assert conn.execute(select(eas_activations)).first() is None


#: No audio output is set up in these tests: operators' sends choose archive only.
ARCHIVE_ONLY = {"archive_only": True}


def test_send_archives_the_message_and_audits(
    station: StationHarness, operator: SignedIn, tmp_path: Path
) -> None:
    activation = create(operator)
    result = operator.request(
        "POST", f"/eas/manual/events/{activation['id']}/send", json=ARCHIVE_ONLY
    )
    assert result.status_code == 200, result.text
    message = result.json["message"]
    header = SameHeader.parse(message["header"])
    assert header.event == "RWT" and header.locations == ("051059", "051107")
    assert header.issued_code == station.clock.now.strftime("%j%H%M")  # the harness clock
    assert message["aired_by"] == "ops"
    assert message["queue"] == result.json["queue"]
    assert message["queue"]["state"] == "queued" and message["queue"]["position"] == 1

    folder = tmp_path / "data" / "eas-archive"
    wav = folder / message["wav"]
    assert wav.is_file() and wav.with_suffix(".json").is_file()
    assert decode_wav(wav.read_bytes()).sample_rate == message["sample_rate"]
    with station.engine.connect() as conn:
        archived = conn.execute(select(eas_archive)).one()
        state = conn.execute(select(eas_activations.c.state)).scalar_one()
    assert archived.activation_id == activation["id"] and archived.header == message["header"]
    assert state == "sent"

    (row,) = audit_rows(station, "eas.broadcast")
    assert row.username == "ops" and row.target == f"eas_activation:{activation['id']}"
    assert message["header"] in row.details
    assert json.loads(row.details)["queue_id"] == message["queue"]["id"]

    played = operator.request("GET", message["audio_url"])
    assert played.status_code == 200 and played.content == wav.read_bytes()


def test_send_succeeds_when_the_audit_write_fails(
    station: StationHarness,
    operator: SignedIn,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    activation = create(operator)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("ledger is down")

    monkeypatch.setattr(station.app.station.ledger, "record", broken)
    with caplog.at_level(logging.CRITICAL):
        result = operator.request(
            "POST", f"/eas/manual/events/{activation['id']}/send", json=ARCHIVE_ONLY
        )
    assert result.status_code == 200, result.text
    assert result.json["sent"] is True
    assert any(r.levelno == logging.CRITICAL for r in caplog.records)
    assert audit_rows(station, "eas.broadcast") == []
    with station.engine.connect() as conn:
        assert conn.execute(select(eas_archive)).first() is not None


def test_send_unknown_activation_is_404(operator: SignedIn) -> None:
    assert operator.request("POST", "/eas/manual/events/999/send").status_code == 404
    assert operator.request("GET", "/eas/manual/events/999/audio.wav").status_code == 404


def test_a_second_send_queues_behind_the_first(station: StationHarness, operator: SignedIn) -> None:
    first, second = create(operator), create(operator, event="RMT")
    one = operator.request("POST", f"/eas/manual/events/{first['id']}/send", json=ARCHIVE_ONLY)
    two = operator.request("POST", f"/eas/manual/events/{second['id']}/send", json=ARCHIVE_ONLY)
    assert one.status_code == 200 and two.status_code == 200, two.text  # no more 409 busy
    assert one.json["queue"]["state"] == two.json["queue"]["state"] == "queued"
    assert (one.json["queue"]["position"], two.json["queue"]["position"]) == (1, 2)
    assert two.json["queue"]["id"] > one.json["queue"]["id"]


def test_purge_audits_first_then_removes(station: StationHarness, operator: SignedIn) -> None:
    first, second = create(operator), create(operator, event="RMT")
    result = operator.request("POST", "/eas/manual/events/purge", json={"ids": [first["id"]]})
    assert result.status_code == 200, result.text
    assert result.json["purged"] == [first["id"]]
    listed = operator.request("GET", "/eas/manual/events").json["activations"]
    assert [item["id"] for item in listed] == [second["id"]]
    assert operator.request("GET", first["audio_url"]).status_code == 404
    (row,) = audit_rows(station, "alert.deleted")
    assert row.target == "eas_activations" and row.username == "ops"

    result = operator.request("POST", "/eas/manual/events/purge", json={"all": True})
    assert result.json["purged"] == [second["id"]]
    again = operator.request("POST", "/eas/manual/events/purge", json={"all": True})
    assert again.json["purged"] == []
    assert len(audit_rows(station, "alert.deleted")) == 2  # nothing purged, nothing recorded


def test_purge_fails_closed_when_the_audit_write_fails(
    station: StationHarness, operator: SignedIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    activation = create(operator)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("ledger is down")

    monkeypatch.setattr(station.app.station.ledger, "record", broken)
    result = operator.request("POST", "/eas/manual/events/purge", json={"all": True})
    assert result.status_code == 500
    assert result.json["error"]["code"] == "audit_failed"
    with station.engine.connect() as conn:
        assert conn.execute(select(eas_activations.c.state)).scalar_one() == "draft"
    assert operator.request("GET", activation["audio_url"]).status_code == 200


@pytest.mark.parametrize("body", [{}, {"ids": []}, {"ids": ["1"]}, {"ids": [True]}, {"all": 1}])
def test_purge_needs_ids_or_all(operator: SignedIn, body: dict[str, Any]) -> None:
    result = operator.request("POST", "/eas/manual/events/purge", json=body)
    assert result.status_code == 422


def test_uploaded_wav_is_the_voice(
    station: StationHarness, operator: SignedIn, tmp_path: Path
) -> None:
    body, headers = multipart({**RWT, "event": "ADR"}, tone_wav(seconds=2.0))
    result = operator.request("POST", "/eas/manual/events", body=body, headers=headers)
    assert result.status_code == 201, result.text
    activation = result.json["activation"]
    assert activation["has_audio"] is True
    stored = tmp_path / "data" / "eas-manual" / f"voice-{activation['id']}.wav"
    assert stored.is_file()
    with_voice = decode_wav(operator.request("GET", activation["audio_url"]).content)
    # ADR: three headers, an 8 s attention signal, 2 s of voice, three EOMs.
    assert with_voice.samples.size / with_voice.sample_rate > 16

    purged = operator.request("POST", "/eas/manual/events/purge", json={"all": True})
    assert purged.status_code == 200
    assert not stored.exists()


def test_bad_upload_is_422(station: StationHarness, operator: SignedIn) -> None:
    body, headers = multipart(RWT, b"RIFF not really a wav")
    result = operator.request("POST", "/eas/manual/events", body=body, headers=headers)
    assert result.status_code == 422
    assert result.json["error"]["details"]["field"] == "audio"


def test_empty_file_part_means_no_audio(operator: SignedIn) -> None:
    body, headers = multipart(RWT, b"")
    result = operator.request("POST", "/eas/manual/events", body=body, headers=headers)
    assert result.status_code == 201, result.text
    assert result.json["activation"]["has_audio"] is False


@pytest.mark.skipif(voice.espeak_path() is None, reason="espeak-ng is not installed")
def test_voice_text_is_spoken(operator: SignedIn) -> None:
    activation = create(operator, voice_text="This is a test of the alert station.")
    audio = decode_wav(operator.request("GET", activation["audio_url"]).content)
    silent = decode_wav(operator.request("GET", create(operator)["audio_url"]).content)
    assert audio.samples.size > silent.samples.size + audio.sample_rate  # over a second of speech


def test_viewer_may_not_use_manual_eas(station: StationHarness) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    assert viewer.request("GET", "/eas/manual").status_code == 403
    assert viewer.request("POST", "/eas/manual/events", json=RWT).status_code == 403
    assert viewer.request("POST", "/eas/manual/events/purge", json={"all": True}).status_code == 403
