"""Output health: Icecast answers (a real icecast2 on loopback) or not (a closed port, a server
that never answers), ALSA listed and openable (a stand-in ``aplay``: there is no sound card
here), the ALSA check skipped while a message airs, results stored with their time."""

from __future__ import annotations

import base64
import socket
import stat
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, insert, select

from alertstation.cli import main
from alertstation.db.engine import begin_write
from alertstation.eas.airing import settings as airing_settings
from alertstation.eas.airing.outputs.alsa import DEVICE_LOCK
from alertstation.eas.airing.outputs.health import (
    ICECAST_TIMEOUT,
    REACHABLE,
    SKIPPED,
    UNREACHABLE,
    check_outputs,
    output_health_job,
    probe_icecast,
    stored_health,
    wait_for_output_health_job,
)
from alertstation.eas.airing.tables import eas_airing_queue, eas_output_health
from alertstation.eas.tables import eas_archive
from alertstation.http.outbound import OutboundClient
from alertstation.worker.jobs import JOBS
from tests.icecast import IcecastServer, icecast_server
from tests.processes import free_port
from tests.support import Clock, StationHarness, clear_tables


@pytest.fixture(scope="module")
def icecast() -> Iterator[IcecastServer]:
    with icecast_server("alertstation-health-") as server:
        yield server


@pytest.fixture
def clean(engine: Engine) -> Iterator[Engine]:
    yield engine
    clear_tables(engine)


@pytest.fixture
def client() -> Iterator[OutboundClient]:
    http = OutboundClient()
    yield http
    http.close()


def _save(engine: Engine, clock: Clock, **body: Any) -> None:
    with begin_write(engine) as conn:
        airing_settings.save(conn, body, updated_by="test", now=clock())


def _source_connections(server: IcecastServer) -> int:
    """Ask Icecast's admin statistics how many source connections it has ever had."""
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}/admin/stats")
    token = f"admin:{server.admin_password}".encode()
    request.add_header("Authorization", "Basic " + base64.b64encode(token).decode())
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback
        stats = answer.read().decode()
    start = stats.index("<source_total_connections>") + len("<source_total_connections>")
    return int(stats[start : stats.index("<", start)])


def fake_aplay(folder: Path, *, cards: str = "", names: str = "null\ndefault\n") -> Path:
    """Write an ``aplay`` that answers ``-L`` and ``-l`` as ALSA would and, asked to play,
    records the device and how many audio frames it was given (``opened.log``); the device
    ``busy`` refuses to open."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "aplay"
    program.write_text(
        f"#!{sys.executable}\n"
        "import io, pathlib, sys, wave\n"
        f"folder = pathlib.Path({str(folder)!r})\n"
        "args = sys.argv[1:]\n"
        f"if args == ['-L']:\n    print({names!r}.replace('\\n', '\\n    a device\\n'), end='')\n"
        "    sys.exit(0)\n"
        f"if args == ['-l']:\n    print({cards!r}, end='')\n    sys.exit(0)\n"
        "device = args[args.index('-D') + 1]\n"
        "frames = wave.open(io.BytesIO(sys.stdin.buffer.read())).getnframes()\n"
        "with open(folder / 'opened.log', 'a') as log:\n"
        "    log.write(f'{device} {frames}\\n')\n"
        "if device == 'busy':\n"
        "    print('aplay: main:831: audio open error: Device or resource busy', file=sys.stderr)\n"
        "    sys.exit(1)\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def _opened(folder: Path) -> list[str]:
    log = folder / "opened.log"
    return log.read_text().splitlines() if log.exists() else []


# --- Icecast ---------------------------------------------------------------------------------


def test_a_running_icecast_is_reachable_and_no_source_connects(
    clean: Engine, client: OutboundClient, icecast: IcecastServer
) -> None:
    clock = Clock()
    _save(clean, clock, icecast_enabled=True, icecast_port=icecast.port, icecast_password="s3cret")
    before = _source_connections(icecast)

    [check] = check_outputs(clean, client=client, clock=clock)

    assert (check.name, check.result, check.target) == (
        "icecast",
        REACHABLE,
        f"127.0.0.1:{icecast.port}",
    )
    assert "answered (HTTP" in check.detail
    assert _source_connections(icecast) == before  # a listener-side request, never a source
    with clean.connect() as conn:
        stored = stored_health(conn)["icecast"]
    assert stored["reachable"] is True and stored["checked_at"] == clock()
    assert "s3cret" not in repr(stored)


def test_a_closed_port_is_unreachable_and_replaces_the_last_result(
    clean: Engine, client: OutboundClient
) -> None:
    clock = Clock()
    port = free_port()
    with begin_write(clean) as conn:
        conn.execute(
            insert(eas_output_health).values(
                name="icecast", target=f"127.0.0.1:{port}", reachable=True, checked_at=clock()
            )
        )
    _save(clean, clock, icecast_enabled=True, icecast_port=port, icecast_password="pw")
    clock.advance(seconds=60)

    [check] = check_outputs(clean, client=client, clock=clock)

    assert check.result == UNREACHABLE
    assert check.detail.startswith(f"no answer within {ICECAST_TIMEOUT:g} s")
    with clean.connect() as conn:
        rows = conn.execute(select(eas_output_health)).all()
    assert [(r.name, r.reachable, r.checked_at) for r in rows] == [("icecast", False, clock())]


def test_a_server_that_never_answers_is_unreachable_after_5_s(client: OutboundClient) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # accepts the connection, never answers
        settings = airing_settings.AiringSettings(
            icecast_enabled=True, icecast_port=silent.getsockname()[1]
        )
        started = time.monotonic()
        ok, detail = probe_icecast(settings, client)
        took = time.monotonic() - started
    assert not ok and "no answer within 5 s" in detail
    assert ICECAST_TIMEOUT - 0.5 <= took < ICECAST_TIMEOUT + 20  # generous on a loaded machine


def test_disabled_outputs_are_not_checked(clean: Engine, client: OutboundClient) -> None:
    assert check_outputs(clean, client=client, clock=Clock()) == []
    with clean.connect() as conn:
        assert stored_health(conn) == {}


# --- ALSA ------------------------------------------------------------------------------------


def test_a_listed_device_that_opens_is_reachable_without_a_sound(
    clean: Engine, client: OutboundClient, tmp_path: Path
) -> None:
    clock = Clock()
    aplay = fake_aplay(tmp_path, cards="card 0: PCH [HDA Intel PCH], device 0: ALC [ALC]\n")
    for device in ("null", "hw:0,0", "plughw:CARD=PCH,DEV=0"):
        _save(clean, clock, alsa_enabled=True, alsa_device=device)
        [check] = check_outputs(clean, client=client, clock=clock, aplay=str(aplay))
        assert (check.name, check.target, check.result) == ("alsa", device, REACHABLE), check
    assert _opened(tmp_path) == ["null 0", "hw:0,0 0", "plughw:CARD=PCH,DEV=0 0"]  # no frames


def test_an_unlisted_or_busy_device_is_unreachable(
    clean: Engine, client: OutboundClient, tmp_path: Path
) -> None:
    clock = Clock()
    aplay = fake_aplay(tmp_path, names="null\nbusy\n")
    _save(clean, clock, alsa_enabled=True, alsa_device="hw:3,0")
    [check] = check_outputs(clean, client=client, clock=clock, aplay=str(aplay))
    assert check.result == UNREACHABLE and check.detail == "ALSA does not list the device hw:3,0"
    assert _opened(tmp_path) == []  # an unlisted device is not opened

    _save(clean, clock, alsa_device="busy")
    [check] = check_outputs(clean, client=client, clock=clock, aplay=str(aplay))
    assert check.result == UNREACHABLE
    assert "cannot be opened" in check.detail and "Device or resource busy" in check.detail


def test_the_alsa_check_is_skipped_while_a_message_airs(
    clean: Engine, client: OutboundClient, tmp_path: Path
) -> None:
    clock = Clock()
    aplay = fake_aplay(tmp_path)
    _save(clean, clock, alsa_enabled=True, alsa_device="null")
    [first] = check_outputs(clean, client=client, clock=clock, aplay=str(aplay))
    assert first.result == REACHABLE
    with begin_write(clean) as conn:
        archive_id = conn.execute(
            insert(eas_archive).values(
                header="ZCZC-WXR-TOR-039085+0030-1231720-KCLE/NWS-",
                wav_path="x.wav",
                sample_rate=22050,
                duration=20.0,
                aired_at=clock(),
            )
        ).inserted_primary_key[0]
        item = conn.execute(
            insert(eas_airing_queue).values(
                archive_id=archive_id, origin="manual", state="airing", enqueued_at=clock()
            )
        ).inserted_primary_key[0]
    clock.advance(seconds=60)

    [check] = check_outputs(clean, client=client, clock=clock, aplay=str(aplay))

    assert check.result == SKIPPED
    assert _opened(tmp_path) == ["null 0"]  # only the first check opened the device
    with clean.connect() as conn:
        assert stored_health(conn)["alsa"]["checked_at"] == clock() - timedelta(seconds=60)

    with begin_write(clean) as conn:  # the message ends: the next check runs again
        conn.execute(
            eas_airing_queue.update().where(eas_airing_queue.c.id == item).values(state="aired")
        )
    [check] = check_outputs(clean, client=client, clock=clock, aplay=str(aplay))
    assert check.result == REACHABLE and len(_opened(tmp_path)) == 2


def test_the_alsa_check_gives_way_to_a_message_playing_in_this_process(
    clean: Engine, client: OutboundClient, tmp_path: Path
) -> None:
    clock = Clock()
    aplay = fake_aplay(tmp_path)
    _save(clean, clock, alsa_enabled=True, alsa_device="null")
    with DEVICE_LOCK:  # the ALSA output holds it while aplay plays a message
        [check] = check_outputs(clean, client=client, clock=clock, aplay=str(aplay))
    assert check.result == SKIPPED and _opened(tmp_path) == []


# --- the worker's job ------------------------------------------------------------------------


def test_the_worker_job_checks_in_the_background_and_stores_the_result(
    station: StationHarness, icecast: IcecastServer
) -> None:
    _save(
        station.engine,
        station.clock,
        icecast_enabled=True,
        icecast_port=icecast.port,
        icecast_password="pw",
    )
    job = next(job for job in JOBS if job.name == "eas-output-health")
    assert (job.interval, job.run) == (60.0, output_health_job)
    job.run(station.app.station)
    wait_for_output_health_job(timeout=60)
    with station.engine.connect() as conn:
        stored = stored_health(conn)
    assert stored["icecast"]["reachable"] is True
    assert stored["icecast"]["checked_at"] == station.clock()


# --- the command -----------------------------------------------------------------------------


def test_the_command_checks_once_prints_each_output_and_exits_1_when_one_is_down(
    clean: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    icecast: IcecastServer,
) -> None:
    url = clean.url.render_as_string(hide_password=False)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("ALERTSTATION_LOG_FORMAT", "text")
    clock = Clock()
    assert main(["eas", "check-outputs"]) == 0
    assert capsys.readouterr().out.splitlines() == ["no audio output is enabled"]

    _save(clean, clock, icecast_enabled=True, icecast_port=icecast.port, icecast_password="pw")
    assert main(["eas", "check-outputs"]) == 0
    assert capsys.readouterr().out.startswith(f"icecast (127.0.0.1:{icecast.port}): reachable: ")

    _save(clean, clock, icecast_port=free_port())
    assert main(["eas", "check-outputs"]) == 1
    assert ": unreachable: no answer within 5 s" in capsys.readouterr().out
    with clean.connect() as conn:
        assert stored_health(conn)["icecast"]["reachable"] is False
