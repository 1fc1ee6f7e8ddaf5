"""The airing queue: order, one message at a time, the broadcast's active flag, outputs' results,
crash recovery and expiry, the ALSA output (with a stand-in ``aplay``) and the airing thread."""

from __future__ import annotations

import os
import socket
import stat
import threading
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from alertstation.db import read_generation
from alertstation.db.engine import begin_write
from alertstation.eas.airing import onair
from alertstation.eas.airing import queue as airing
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.outputs import OutputError
from alertstation.eas.airing.outputs.alsa import AlsaOutput
from alertstation.eas.airing.outputs.icecast import IcecastOutput, IcecastTarget
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.archive import AiredMessage
from alertstation.eas.tables import eas_archive
from tests.eas.airing_support import queue_message
from tests.eas.test_manual import RWT
from tests.support import SignedIn, StationHarness

HEADER = "ZCZC-EAS-RWT-051059+0030-3251200-WXYZ/FM -"


@pytest.fixture
def operator(station: StationHarness) -> SignedIn:
    station.add_user("ops", "operator")
    return station.sign_in("ops")


def send(client: SignedIn, *, archive_only: bool = True, **overrides: Any) -> dict[str, Any]:
    """Create an activation and send it (archive only unless told: most tests set up no
    output); return the archive row with its queue block."""
    created = client.request("POST", "/eas/manual/events", json={**RWT, **overrides})
    assert created.status_code == 201, created.text
    result = client.request(
        "POST",
        f"/eas/manual/events/{created.json['activation']['id']}/send",
        json={"archive_only": archive_only},
    )
    assert result.status_code == 200, result.text
    assert result.json["queue"] == result.json["message"]["queue"]
    return result.json["message"]


def items(station: StationHarness) -> list[Any]:
    with station.engine.connect() as conn:
        return list(conn.execute(select(eas_airing_queue).order_by(eas_airing_queue.c.id)))


def broadcast(station: StationHarness) -> dict[str, Any]:
    return station.client.simulate_get("/api/broadcast/state").json


def configure(station: StationHarness, **values: Any) -> None:
    with begin_write(station.engine) as conn:
        settings_airing.save(conn, values, updated_by="test", now=station.clock())


def short_message(rate: int = 8000) -> AiredMessage:
    tone = 0.2 * np.sin(2 * np.pi * 1000 * np.arange(rate // 4) / rate)
    return AiredMessage(HEADER, (tone * 32767).astype(np.int16), rate)


def test_sends_air_in_order_one_at_a_time(station: StationHarness, operator: SignedIn) -> None:
    first = send(operator)
    second = send(operator, event="RMT")
    assert (first["queue"]["position"], second["queue"]["position"]) == (1, 2)
    assert [row.state for row in items(station)] == ["queued", "queued"]
    state = broadcast(station)
    assert state["active"] is True and state["airing"] is True

    queue = operator.request("GET", "/eas/queue").json
    assert [item["id"] for item in queue["items"]] == [first["queue"]["id"], second["queue"]["id"]]
    assert queue["active"] is True and queue["items"][0]["header"] == first["header"]

    app_station = station.app.station
    assert onair.run_once(app_station) is True
    rows = items(station)
    assert [row.state for row in rows] == ["archived_only", "queued"]
    assert rows[0].started_at is not None and rows[0].finished_at is not None
    assert broadcast(station)["active"] is True  # the second one still waits

    assert onair.run_once(app_station) is True
    assert [row.state for row in items(station)] == ["archived_only", "archived_only"]
    assert broadcast(station)["active"] is False
    assert onair.run_once(app_station) is False  # nothing left

    queue = operator.request("GET", "/eas/queue").json
    assert queue["active"] is False
    assert [
        [(o["name"], o["ok"], o["error"]) for o in item["outputs"]] for item in queue["items"]
    ] == [[("archive", True, None)]] * 2
    assert queue["items"][-1]["message_id"] == second["id"]  # newest last


def test_the_manual_page_shows_the_queue(station: StationHarness, operator: SignedIn) -> None:
    empty = operator.request("GET", "/eas/manual", csrf=False, headers={"Accept": "text/html"})
    assert 'id="eas-no-queue"' in empty.text
    sent = send(operator)
    html = operator.request("GET", "/eas/manual", csrf=False, headers={"Accept": "text/html"}).text
    assert f'data-queue-id="{sent["queue"]["id"]}" data-state="queued"' in html
    assert onair.run_once(station.app.station)
    html = operator.request("GET", "/eas/manual", csrf=False, headers={"Accept": "text/html"}).text
    assert f'data-queue-id="{sent["queue"]["id"]}" data-state="archived_only"' in html


def test_no_claim_while_a_message_is_on_the_air(station: StationHarness) -> None:
    app_station = station.app.station
    first = queue_message(app_station, short_message(), aired_by="a")
    second = queue_message(app_station, short_message(), aired_by="b")
    claimed = airing.claim_next(station.engine, station.clock())
    assert claimed is not None and claimed.id == first["queue"]["id"]
    assert claimed.state == "airing"
    assert airing.claim_next(station.engine, station.clock()) is None  # another loop must wait
    with station.engine.connect() as conn:
        assert airing.position(conn, second["queue"]["id"]) == 2
    airing.finish(
        station.engine, claimed.id, state="aired", error=None, outputs={}, now=station.clock()
    )
    following = airing.claim_next(station.engine, station.clock())
    assert following is not None and following.id == second["queue"]["id"]


def test_racing_loops_claim_one_message_between_them(station: StationHarness) -> None:
    for _ in range(3):
        queue_message(station.app.station, short_message(), aired_by="ops")
    start = threading.Barrier(4)
    claimed: list[Any] = []

    def loop() -> None:
        start.wait()
        claimed.append(airing.claim_next(station.engine, station.clock()))

    threads = [threading.Thread(target=loop) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    winners = [item for item in claimed if item is not None]
    assert len(claimed) == 4 and len(winners) == 1
    assert [row.state for row in items(station)] == ["airing", "queued", "queued"]


def test_an_idle_queue_is_checked_without_writing(station: StationHarness) -> None:
    with station.engine.connect() as conn:
        before = read_generation(conn, airing.GENERATION)
    assert onair.run_once(station.app.station) is False
    with station.engine.connect() as conn:
        assert read_generation(conn, airing.GENERATION) == before


def test_the_active_flag_reaches_other_processes(station: StationHarness) -> None:
    elsewhere = airing.AiringState(station.engine, check_interval=0.0)  # another process's view
    assert elsewhere.active is False
    queue_message(station.app.station, short_message(), aired_by="ops")
    assert elsewhere.active is True
    assert onair.run_once(station.app.station)
    assert elsewhere.active is False


def test_a_failed_output_is_recorded_and_the_message_stays_archived(
    station: StationHarness, operator: SignedIn
) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    configure(
        station,
        icecast_enabled=True,
        icecast_host="127.0.0.1",
        icecast_port=closed_port,
        icecast_password="pw",
    )
    sent = send(operator, archive_only=False)
    assert onair.run_once(station.app.station)
    (row,) = items(station)
    assert row.state == "failed"
    assert "connection refused" in row.error and row.error.startswith("icecast: ")
    result = operator.request("GET", "/eas/queue").json["items"][0]
    outputs = {output["name"]: output for output in result["outputs"]}
    assert (outputs["archive"]["ok"], outputs["archive"]["error"]) == (True, None)
    assert outputs["icecast"]["ok"] is False
    assert f"127.0.0.1:{closed_port}" in outputs["icecast"]["error"]
    listed = operator.request("GET", "/messages").json["messages"]
    assert [message["id"] for message in listed] == [sent["id"]]
    assert broadcast(station)["active"] is False


def test_a_missing_archive_file_fails_the_airing(station: StationHarness, tmp_path: Path) -> None:
    sent = queue_message(station.app.station, short_message(), aired_by="ops")
    (tmp_path / "data" / "eas-archive" / sent["wav"]).unlink()
    assert onair.run_once(station.app.station)
    (row,) = items(station)
    assert row.state == "failed" and "cannot be read" in row.error


def test_crash_recovery_marks_an_item_interrupted(station: StationHarness) -> None:
    app_station = station.app.station
    queue_message(app_station, short_message(), aired_by="ops")
    waiting = queue_message(app_station, short_message(), aired_by="ops")
    claimed = airing.claim_next(station.engine, station.clock())  # a worker that then died
    assert claimed is not None and broadcast(station)["active"] is True

    assert onair.recover(app_station) == [claimed.id]
    rows = items(station)
    assert [row.state for row in rows] == ["interrupted", "queued"]
    assert rows[0].error == airing.INTERRUPTED_ERROR
    assert onair.recover(app_station) == []
    assert onair.run_once(app_station)  # the queue goes on with the next message
    assert [row.state for row in items(station)] == ["interrupted", "archived_only"]
    assert items(station)[1].id == waiting["queue"]["id"]


def test_a_message_whose_purge_time_passed_in_the_queue_is_not_aired(
    station: StationHarness,
) -> None:
    queue_message(station.app.station, short_message(), aired_by="ops")  # purge +0030
    station.clock.advance(minutes=31)
    assert onair.run_once(station.app.station) is False
    (row,) = items(station)
    assert row.state == "failed" and row.error.startswith("expired")
    assert broadcast(station)["active"] is False


def test_deleting_a_queued_message_takes_it_off_the_queue(
    station: StationHarness, operator: SignedIn
) -> None:
    sent = send(operator)
    assert broadcast(station)["active"] is True
    assert operator.request("POST", f"/messages/{sent['id']}/delete").status_code == 200
    assert items(station) == []
    assert broadcast(station)["active"] is False


def test_resend_queues_a_copy(station: StationHarness, operator: SignedIn, tmp_path: Path) -> None:
    first = send(operator)
    again = operator.request("POST", f"/messages/{first['id']}/resend", json={"archive_only": True})
    assert again.status_code == 200, again.text
    assert again.json["queue"]["position"] == 2
    assert [row.origin for row in items(station)] == ["manual", "resend"]
    folder = tmp_path / "data" / "eas-archive"
    assert (folder / again.json["message"]["wav"]).read_bytes() == (
        folder / first["wav"]
    ).read_bytes()


def test_sends_render_at_the_airing_sample_rate(
    station: StationHarness, operator: SignedIn
) -> None:
    configure(station, sample_rate=44100)
    sent = send(operator)
    assert sent["sample_rate"] == 44100


def test_an_unknown_origin_writes_nothing(station: StationHarness, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="origin"):
        queue_message(station.app.station, short_message(), aired_by="x", origin="radio")
    with station.engine.connect() as conn:
        assert conn.execute(select(eas_archive)).first() is None
    assert not any((tmp_path / "data").rglob("*.wav"))


def test_the_airing_thread_airs_the_queue_and_stops(station: StationHarness) -> None:
    app_station = station.app.station
    sent = queue_message(app_station, short_message(), aired_by="ops")
    stop = threading.Event()
    thread = onair.start_airing(app_station, stop)
    try:
        deadline = time.monotonic() + 30
        while items(station)[0].state != "archived_only" and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    (row,) = items(station)
    assert row.id == sent["queue"]["id"] and row.state == "archived_only"


# --- the ALSA output, with a stand-in aplay (there is no sound card here) -------------------


def stub_aplay(folder: Path, exit_code: int = 0, stderr: str = "") -> Path:
    """Write an ``aplay`` that records its arguments and standard input, then exits."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "aplay"
    program.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > "{folder}/argv"\n'
        f'cat > "{folder}/stdin.wav"\n'
        + (f'echo "{stderr}" >&2\n' if stderr else "")
        + f"exit {exit_code}\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def test_alsa_output_plays_the_archived_wav_through_aplay(
    station: StationHarness, operator: SignedIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    stub_aplay(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    configure(station, alsa_enabled=True, alsa_device="plughw:CARD=PCH,DEV=0")
    sent = send(operator, archive_only=False)
    assert onair.run_once(station.app.station)
    (row,) = items(station)
    assert row.state == "aired", row.error
    assert (bin_dir / "argv").read_text().splitlines() == [
        "-q",
        "-D",
        "plughw:CARD=PCH,DEV=0",
        "-t",
        "wav",
        "-",
    ]
    archived = tmp_path / "data" / "eas-archive" / sent["wav"]
    with wave.open(str(bin_dir / "stdin.wav")) as played, wave.open(str(archived)) as kept:
        assert played.getframerate() == kept.getframerate() == sent["sample_rate"]
        assert played.getnchannels() == 1 and played.getsampwidth() == 2
        assert played.readframes(played.getnframes()) == kept.readframes(kept.getnframes())


def test_alsa_failure_carries_aplay_s_message(tmp_path: Path) -> None:
    program = stub_aplay(tmp_path / "bin", exit_code=1, stderr="audio open error: Device busy")
    output = AlsaOutput("hw:0,0", aplay=str(program))
    with pytest.raises(OutputError, match=r"aplay -D hw:0,0 failed \(exit 1\): .*Device busy"):
        output.play(short_message())


def test_alsa_device_names_cannot_be_options() -> None:
    with pytest.raises(ValueError):
        AlsaOutput("--help")


def test_icecast_connection_refused_is_a_clear_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = IcecastTarget("127.0.0.1", port, "/eas.mp3", "source", "pw")
    with pytest.raises(OutputError, match="connection refused"):
        IcecastOutput(target).play(short_message())
