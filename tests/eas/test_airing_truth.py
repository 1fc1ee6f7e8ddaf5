"""Aired means on the air: the result per output and per airing, 409 no_output, the broadcast
state's ON AIR, Stop (cut, EOM, relays released) and Remove, and the send confirmations.

ALSA is the real output here, through an ``aplay`` stand-in that lasts a scaled share of each
WAV's length (no runner has a sound card); the relays are a stand-in GPIO driver. The real
icecast2 and multimon-ng walk is in ``tests/browser/test_eas_on_air.py``.
"""

from __future__ import annotations

import os
import threading
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from sqlalchemy import select

from alertstation.audit.actor import Actor
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from alertstation.eas import archive
from alertstation.eas.airing import broadcast, onair, relays
from alertstation.eas.airing import queue as airing
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.live import LiveAudio
from alertstation.eas.airing.tables import eas_airing_outputs, eas_airing_queue
from alertstation.eas.archive import AiredMessage
from alertstation.eas.audio import render_eom, render_message
from alertstation.eas.decode import decode_pcm
from alertstation.settings_admin import sections
from tests.eas.airing_support import queue_message, timed_aplay
from tests.eas.test_manual import RWT
from tests.support import SignedIn, StationHarness

TOR = "ZCZC-WXR-TOR-039137+0030-3251200-WXYZ/FM -"
NPT = "ZCZC-PEP-NPT-000000+0030-3251200-WXYZ/FM -"
NO_OUTPUT = "No audio output is set up; choose archive only to record it without airing"


@pytest.fixture
def operator(station: StationHarness) -> SignedIn:
    station.add_user("ops", "operator")
    return station.sign_in("ops")


@pytest.fixture
def alsa(station: StationHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Enable the ALSA output with a timed ``aplay`` stand-in; return its folder."""
    folder = tmp_path / "bin"
    timed_aplay(folder)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    with begin_write(station.engine) as conn:
        settings_airing.save(conn, {"alsa_enabled": True}, updated_by="t", now=station.clock())
    return folder


def create(client: SignedIn, **overrides: Any) -> int:
    created = client.request("POST", "/eas/manual/events", json={**RWT, **overrides})
    assert created.status_code == 201, created.text
    return int(created.json["activation"]["id"])


def queue_rows(station: StationHarness) -> list[Any]:
    with station.engine.connect() as conn:
        return list(conn.execute(select(eas_airing_queue).order_by(eas_airing_queue.c.id)))


def output_rows(station: StationHarness, item_id: int) -> dict[str, Any]:
    with station.engine.connect() as conn:
        rows = conn.execute(
            select(eas_airing_outputs).where(eas_airing_outputs.c.queue_id == item_id)
        ).all()
    return {row.name: row for row in rows}


def broadcast_audits(station: StationHarness) -> list[dict[str, Any]]:
    with station.engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.username, audit_logs.c.details)
            .where(audit_logs.c.action == "eas.broadcast")
            .order_by(audit_logs.c.id)
        ).all()
    return [{"actor": row.username, **orjson.loads(row.details or "{}")} for row in rows]


def long_message(seconds: float = 60.0, rate: int = 8000) -> AiredMessage:
    tone = 0.2 * np.sin(2 * np.pi * 1000 * np.arange(int(seconds * rate)) / rate)
    return AiredMessage(TOR, (tone * 32767).astype(np.int16), rate)


# --- no output: archive only ----------------------------------------------------------------


def test_without_an_output_an_operator_s_send_is_refused_and_archive_only_records_it(
    station: StationHarness, operator: SignedIn
) -> None:
    activation = create(operator)
    refused = operator.request("POST", f"/eas/manual/events/{activation}/send")
    assert refused.status_code == 409
    assert refused.json["error"] == {"code": "no_output", "message": NO_OUTPUT}
    assert queue_rows(station) == []  # nothing archived, nothing queued

    sent = operator.request(
        "POST", f"/eas/manual/events/{activation}/send", json={"archive_only": True}
    )
    assert sent.status_code == 200, sent.text
    assert onair.run_once(station.app.station)
    (row,) = queue_rows(station)
    assert (row.state, row.archive_only) == ("archived_only", True)
    assert set(output_rows(station, row.id)) == {"archive"}

    messages = operator.request("GET", "/messages", headers={"Accept": "application/json"}).json
    assert messages["messages"][0]["state"] == "archived_only"
    queue = operator.request("GET", "/eas/queue", headers={"Accept": "application/json"}).json
    assert [item["state"] for item in queue["items"]] == ["archived_only"]
    assert queue["items"][0]["outputs"][0]["name"] == "archive"
    assert queue["items"][0]["outputs"][0]["ok"] is True

    # The sent activation offers Resend, not Send: sending it again is refused.
    again = operator.request("POST", f"/eas/manual/events/{activation}/send")
    assert again.status_code == 409 and again.json["error"]["code"] == "already_sent"
    message_id = sent.json["message"]["id"]
    resend = operator.request("POST", f"/messages/{message_id}/resend")
    assert resend.status_code == 409 and resend.json["error"]["code"] == "no_output"
    generate = operator.request("POST", "/manual/generate", json=RWT)
    assert generate.status_code == 409 and generate.json["error"]["code"] == "no_output"
    admin = operator.request("POST", "/admin/eas/manual_generate", json=RWT)
    assert admin.status_code == 409 and admin.json["error"]["code"] == "no_output"
    listed = operator.request("GET", "/eas/manual/events").json["activations"]
    assert [item["id"] for item in listed] == [activation]  # the refused one stored no draft
    only = operator.request(
        "POST", "/admin/eas/manual_generate", json={**RWT, "archive_only": True}
    )
    assert only.status_code == 201, only.text


def test_automatic_origins_proceed_without_an_output_and_are_archived_only(
    station: StationHarness,
) -> None:
    app_station = station.app.station
    for origin in ("forward", "relay", "rwt"):
        queue_message(app_station, long_message(0.25), origin=origin, aired_by=origin)
    while onair.run_once(app_station):
        pass
    assert [(row.origin, row.state) for row in queue_rows(station)] == [
        ("forward", "archived_only"),
        ("relay", "archived_only"),
        ("rwt", "archived_only"),
    ]
    assert [a["origin"] for a in broadcast_audits(station)] == ["forward", "relay", "rwt"]


# --- a real output ------------------------------------------------------------------------------


def test_an_airing_through_alsa_is_aired_with_a_result_per_output(
    station: StationHarness, operator: SignedIn, alsa: Path
) -> None:
    activation = create(operator)
    confirmation = operator.request("GET", f"/eas/manual/events/{activation}/confirmation").json
    info = confirmation["confirmation"]
    assert info["event"] == "Required Weekly Test" and info["outputs"] == ["alsa"]
    assert info["valid_minutes"] == 30 and info["duration"] > 0
    assert info["archive_only_required"] is False and info["first_aired_at"] is None
    sent = operator.request("POST", f"/eas/manual/events/{activation}/send")
    assert sent.status_code == 200, sent.text
    assert onair.run_once(station.app.station)
    (row,) = queue_rows(station)
    assert row.state == "aired", row.error
    outputs = output_rows(station, row.id)
    assert set(outputs) == {"archive", "alsa"}
    assert all(o.ok and o.started_at and o.ended_at and o.error is None for o in outputs.values())

    first = operator.request("GET", f"/eas/manual/events/{activation}/confirmation").json
    assert first["confirmation"]["first_aired_at"] == row.started_at.isoformat()
    assert first["confirmation"]["message_id"] == sent.json["message"]["id"]
    # Resend asks again, naming when the message first aired.
    again = operator.request("GET", f"/messages/{sent.json['message']['id']}/confirmation").json
    assert again["confirmation"]["first_aired_at"] == row.started_at.isoformat()
    assert again["confirmation"]["outputs"] == ["alsa"]
    resent = operator.request("POST", f"/messages/{sent.json['message']['id']}/resend")
    assert resent.status_code == 200, resent.text
    assert [r.origin for r in queue_rows(station)] == ["manual", "resend"]


def test_a_failing_real_output_fails_the_airing_and_keeps_its_error(
    station: StationHarness, alsa: Path
) -> None:
    (alsa / "aplay").write_text("#!/bin/sh\necho 'audio open error: Device busy' >&2\nexit 1\n")
    queue_message(station.app.station, long_message(0.25))
    assert onair.run_once(station.app.station)
    (row,) = queue_rows(station)
    assert row.state == "failed"
    outputs = output_rows(station, row.id)
    assert outputs["alsa"].ok is False and "Device busy" in outputs["alsa"].error
    assert outputs["archive"].ok is True


def test_an_item_left_on_the_air_is_interrupted_and_not_aired_again(
    station: StationHarness,
) -> None:
    app_station = station.app.station
    queue_message(app_station, long_message(0.25))
    claimed = airing.claim_next(station.engine, station.clock())
    assert claimed is not None
    assert onair.recover(app_station) == [claimed.id]
    (row,) = queue_rows(station)
    assert row.state == "interrupted"
    assert onair.run_once(app_station) is False


# --- ON AIR and Stop ----------------------------------------------------------------------------


class RecordingGpio:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    def write(self, pin: int, high: bool) -> None:
        self.events.append(f"gpio{pin}={'closed' if high else 'open'}")


def wait_for(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError("timed out")


def test_stop_cuts_the_message_sends_the_eom_then_releases_the_relays(
    station: StationHarness,
    operator: SignedIn,
    alsa: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    monkeypatch.setattr(relays, "open_gpio", lambda: RecordingGpio(events))
    with begin_write(station.engine) as conn:
        sections.save(
            conn,
            sections.HARDWARE,
            {"relay_pins": [17], "relay_active_high": True},
            updated_by="test",
            now=station.clock(),
        )
    app_station = station.app.station
    nothing = operator.request("POST", "/api/eas/airing/stop", json={"clear_queue": False})
    assert nothing.status_code == 409 and nothing.json["error"]["code"] == "nothing_on_air"

    on_air = queue_message(app_station, long_message(60.0))
    waiting = queue_message(app_station, long_message(0.25))
    later = queue_message(app_station, long_message(0.25))
    removed = operator.request("DELETE", f"/api/eas/airing/queue/{waiting['queue']['id']}")
    assert removed.status_code == 200, removed.text

    thread = threading.Thread(
        target=onair.run_once, args=(app_station,), kwargs={"trace": events.append}
    )
    thread.start()
    try:
        wait_for(lambda: (alsa / "play-0.wav").exists())
        state = station.client.simulate_get("/api/broadcast/state").json
        assert state["on_air"] is True and state["airing"] is True
        now = state["now_airing"]
        assert now["id"] == on_air["queue"]["id"] and now["event"] == "Tornado Warning"
        assert now["origin"] == "manual" and now["header"] == TOR
        assert {"name": "alsa", "ok": True} in now["outputs"]
        assert all(set(o) == {"name", "ok"} for o in now["outputs"])  # no host, mount, error

        busy = operator.request("DELETE", f"/api/eas/airing/queue/{on_air['queue']['id']}")
        assert busy.status_code == 409 and busy.json["error"]["code"] == "on_air"
        stop = operator.request("POST", "/api/eas/airing/stop", json={"clear_queue": True})
        assert stop.status_code == 200, stop.text
        assert stop.json["removed"] == [later["queue"]["id"]]
        events.append("stop_asked")
    finally:
        thread.join(timeout=60)
    assert not thread.is_alive()

    steps = [e for e in events if e != "stop_asked" and not e.startswith("first_audio:")]
    assert steps == [
        "gpio17=closed",
        "stop_recorded",
        "audio_cut:alsa",
        "eom_sent:alsa",
        "gpio17=open",
        "relays_released",
    ]
    # The EOM went out on the output after the cut: three NNNN bursts.
    with wave.open(str(alsa / "play-1.wav")) as eom:
        pcm = np.frombuffer(eom.readframes(eom.getnframes()), dtype="<i2")
        decoded = decode_pcm(pcm, eom.getframerate())
    assert [(d.kind, d.bursts) for d in decoded] == [("eom", 3)]

    rows = queue_rows(station)
    assert [row.state for row in rows] == ["stopped", "removed", "removed"]
    assert rows[0].stop_requested_by == "ops"
    audits = [a for a in broadcast_audits(station) if "result" in a]
    assert [(a["result"], a["actor"]) for a in audits] == [("removed", "ops"), ("stopped", "ops")]
    assert audits[1]["stopped_by"] == "ops" and audits[1]["removed"] == [later["queue"]["id"]]
    state = station.client.simulate_get("/api/broadcast/state").json
    assert state["on_air"] is False and state["now_airing"] is None
    queue = operator.request("GET", "/eas/queue").json["items"]
    assert queue[0]["stopped_by"] == "ops"
    gone = operator.request("DELETE", f"/api/eas/airing/queue/{waiting['queue']['id']}")
    assert gone.status_code == 409 and gone.json["error"]["code"] == "not_queued"


def test_a_national_message_cuts_the_message_on_the_air_with_its_eom(
    station: StationHarness, alsa: Path
) -> None:
    events: list[str] = []
    app_station = station.app.station
    queue_message(app_station, long_message(60.0))
    thread = threading.Thread(
        target=onair.run_once, args=(app_station,), kwargs={"trace": events.append}
    )
    thread.start()
    try:
        wait_for(lambda: (alsa / "play-0.wav").exists())
        national = long_message(0.25)
        npt = AiredMessage(NPT, national.samples, national.sample_rate)
        queue_message(app_station, npt, origin="relay", aired_by="relay")
    finally:
        thread.join(timeout=60)
    assert not thread.is_alive()
    assert events.index("audio_cut:alsa") < events.index("eom_sent:alsa")
    while onair.run_once(app_station):
        pass
    rows = queue_rows(station)
    assert [(row.state, row.stop_requested_by) for row in rows] == [
        ("stopped", airing.NATIONAL_CUT),
        ("aired", None),
    ]


def test_a_national_message_never_cuts_another_national_message(
    station: StationHarness,
) -> None:
    national = long_message(0.25)
    with begin_write(station.engine) as conn:
        assert airing.cut_for_national(conn, TOR, now=station.clock()) is None
        assert airing.cut_for_national(conn, NPT, now=station.clock()) is None  # nothing on air
    app_station = station.app.station
    queue_message(app_station, AiredMessage(NPT, national.samples, national.sample_rate))
    assert airing.claim_next(station.engine, station.clock()) is not None
    with begin_write(station.engine) as conn:
        assert airing.cut_for_national(conn, NPT, now=station.clock()) is None


def test_stop_and_remove_need_eas_broadcast(station: StationHarness) -> None:
    station.add_user("viewer", "viewer")
    viewer = station.sign_in("viewer")
    assert viewer.request("POST", "/api/eas/airing/stop", json={}).status_code == 403
    assert viewer.request("DELETE", "/api/eas/airing/queue/1").status_code == 403
    anonymous = station.client.simulate_post("/api/eas/airing/stop", json={})
    assert anonymous.status_code == 401


def test_the_worker_stopping_takes_the_stop_path_cut_eom_relays_released(
    station: StationHarness, alsa: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM of the worker (its stop event) with a message on the air: the audio is cut, the
    EOM sent, the relays released, and only then does the airing step return."""
    events: list[str] = []
    monkeypatch.setattr(relays, "open_gpio", lambda: RecordingGpio(events))
    with begin_write(station.engine) as conn:
        sections.save(
            conn,
            sections.HARDWARE,
            {"relay_pins": [17], "relay_active_high": True},
            updated_by="test",
            now=station.clock(),
        )
    app_station = station.app.station
    on_air = queue_message(app_station, long_message(60.0))
    stop = threading.Event()
    thread = threading.Thread(
        target=onair.run_once,
        args=(app_station,),
        kwargs={"cancel": stop, "trace": events.append},
    )
    thread.start()
    try:
        wait_for(lambda: (alsa / "play-0.wav").exists())
        stop.set()
    finally:
        thread.join(timeout=60)
    assert not thread.is_alive()
    assert [e for e in events if not e.startswith("first_audio:")] == [
        "gpio17=closed",
        "shutdown",
        "audio_cut:alsa",
        "eom_sent:alsa",
        "gpio17=open",
        "relays_released",
    ]
    with wave.open(str(alsa / "play-1.wav")) as eom:
        pcm = np.frombuffer(eom.readframes(eom.getnframes()), dtype="<i2")
        decoded = decode_pcm(pcm, eom.getframerate())
    assert [(d.kind, d.bursts) for d in decoded] == [("eom", 3)]
    row = next(r for r in queue_rows(station) if r.id == on_air["queue"]["id"])
    assert (row.state, row.error) == ("interrupted", airing.INTERRUPTED_ERROR)


def test_stop_cuts_a_live_relay_sends_the_eom_then_releases_the_relays(
    station: StationHarness,
    operator: SignedIn,
    alsa: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    monkeypatch.setattr(relays, "open_gpio", lambda: RecordingGpio(events))
    with begin_write(station.engine) as conn:
        sections.save(
            conn,
            sections.HARDWARE,
            {"relay_pins": [17], "relay_active_high": True},
            updated_by="test",
            now=station.clock(),
        )
    app_station = station.app.station
    rate = 8000
    audio = LiveAudio(rate)
    fallback = render_message(NPT, sample_rate=rate, attention_seconds=0.0)
    audio.prefix = render_message(NPT, sample_rate=rate, attention_seconds=0.0, include_eom=False)
    audio.eom = render_eom(sample_rate=rate)
    queued = broadcast.broadcast(
        app_station,
        origin="relay",
        render=lambda _rate: AiredMessage(NPT, fallback, rate),
        actor=Actor.system("relay"),
        target="test",
        aired_by="relay",
        sample_rate=rate,
        live=audio,
    )
    body = long_message(0.5).samples
    audio.put(body)  # the source keeps playing: the live audio never ends by itself

    thread = threading.Thread(
        target=onair.run_once, args=(app_station,), kwargs={"trace": events.append}
    )
    thread.start()
    try:
        wait_for(lambda: "first_audio:alsa" in events)
        stop = operator.request("POST", "/api/eas/airing/stop", json={"clear_queue": False})
        assert stop.status_code == 200, stop.text
    finally:
        thread.join(timeout=60)
    assert not thread.is_alive()
    audio.put(body)  # what the source plays after the stop goes nowhere

    assert [e for e in events if e != "first_audio:alsa"] == [
        "gpio17=closed",
        "stop_recorded",
        "audio_cut:alsa",
        "eom_sent:alsa",
        "gpio17=open",
        "relays_released",
    ]
    with wave.open(str(alsa / "play-0.wav")) as eom:  # the cut live audio was never finished
        pcm = np.frombuffer(eom.readframes(eom.getnframes()), dtype="<i2")
    assert [(d.kind, d.bursts) for d in decode_pcm(pcm, rate)] == [("eom", 3)]
    (row,) = queue_rows(station)
    assert row.id == queued["queue"]["id"] and row.state == "stopped" and row.origin == "relay"
    # The archive holds what aired: the station's header, the live audio, then the EOM.
    with station.engine.connect() as conn:
        kept = archive.get_row(conn, queued["id"])
    with wave.open(str(archive.wav_file(app_station.settings.data_dir, kept.wav_path))) as wav:
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    decoded = decode_pcm(pcm, rate)
    assert [(d.kind, d.text) for d in decoded] == [("header", NPT), ("eom", "NNNN")]
    assert pcm.size >= audio.prefix.size + audio.eom.size  # what was read before the cut, too
    assert kept.duration == pytest.approx(pcm.size / rate, abs=0.01)


def test_a_leader_that_cannot_confirm_its_lock_claims_nothing_and_cuts_the_message_on_air(
    station: StationHarness, alsa: Path
) -> None:
    """The leader lease lapses (its link to the database is cut): nothing more is claimed, and
    the message on the air is cut with its EOM and recorded interrupted, as on shutdown, so a
    standby that leads next never airs beside it."""
    app_station = station.app.station
    waiting = queue_message(app_station, long_message(0.25))
    assert onair.run_once(app_station, leading=lambda: False) is False
    (row,) = queue_rows(station)
    assert (row.id, row.state) == (waiting["queue"]["id"], "queued")  # left for the next leader
    assert onair.run_once(app_station, leading=lambda: True)  # a confirmed lease airs it

    on_air = queue_message(app_station, long_message(60.0))
    confirmed = threading.Event()
    confirmed.set()
    events: list[str] = []
    thread = threading.Thread(
        target=onair.run_once,
        args=(app_station,),
        kwargs={"leading": confirmed.is_set, "trace": events.append},
    )
    thread.start()
    try:
        wait_for(lambda: (alsa / "play-1.wav").exists())
        confirmed.clear()
    finally:
        thread.join(timeout=60)
    assert not thread.is_alive()
    assert [e for e in events if not e.startswith("first_audio:")] == [
        "leadership_unconfirmed",
        "audio_cut:alsa",
        "eom_sent:alsa",
    ]
    row = next(r for r in queue_rows(station) if r.id == on_air["queue"]["id"])
    assert (row.state, row.error) == ("interrupted", airing.INTERRUPTED_ERROR)
