"""Output health: is each enabled real output (Icecast, ALSA) reachable right now?

The worker checks every enabled output every :data:`INTERVAL` seconds
(:func:`output_health_job`); ``alertstation eas outputs check`` runs the same check once.
Each result (reachable or not, why not, and when) replaces the output's row of
``eas_output_health``, which the overview page reads (:func:`stored_health`).

* **Icecast** is reachable when its server answers an HTTP request (any status) within
  :data:`ICECAST_TIMEOUT` seconds: a ``GET /`` through the station's one outbound HTTP client.
  No source connection is opened, so a listener never sees a mount appear, and the source
  password is never sent.
* **ALSA** is reachable when the device is listed (``aplay -L`` names it, or ``aplay -l``
  lists the card and device of an ``hw:N,M`` form) and can be opened: ``aplay`` is given a WAV
  with no samples, which opens the device, sets its format and closes it, without a sound.
  The check is skipped while a message airs (a sound card opened for the check could refuse the
  message) and the previous result is kept; the in-process lock of :mod:`.alsa`, held by the
  check only while it opens the device (at most :data:`OPEN_TIMEOUT`), also keeps the check and
  a message from opening the device at the same moment.
"""

from __future__ import annotations

import functools
import io
import logging
import re
import shutil
import subprocess
import wave
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Connection, Engine, delete, insert, select

from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.airing import settings as airing_settings
from alertstation.eas.airing.outputs.alsa import DEVICE_LOCK
from alertstation.eas.airing.tables import eas_airing_queue, eas_output_health
from alertstation.http.outbound import FetchError, Limits, OutboundClient
from alertstation.rounds import RoundRunner

log = logging.getLogger("alertstation.eas")

#: How often the worker checks the outputs, in seconds.
INTERVAL: Final[float] = 60.0
#: How long Icecast's server has to answer, in seconds (connect, read and the whole request).
ICECAST_TIMEOUT: Final[float] = 5.0
#: How long ``aplay`` may take to list the devices, in seconds.
ALSA_TIMEOUT: Final[float] = 5.0
#: How long ``aplay`` may take to open the device (and close it), in seconds: a message that
#: starts meanwhile waits at most this long for the device.
OPEN_TIMEOUT: Final[float] = 2.0
REACHABLE: Final[str] = "reachable"
UNREACHABLE: Final[str] = "unreachable"
SKIPPED: Final[str] = "skipped"
NAMES: Final[tuple[str, ...]] = ("icecast", "alsa")
_ANSWER_LIMITS: Final[Limits] = Limits(
    connect_timeout=ICECAST_TIMEOUT,
    read_timeout=ICECAST_TIMEOUT,
    max_bytes=64 * 1024,
    deadline=ICECAST_TIMEOUT,
)
_CARD_FORM = re.compile(r"^(?:plug)?hw:(?:CARD=)?([^,]+)(?:,(?:DEV=)?(\d+))?$")
_CARD_LINE = re.compile(r"^card (\d+): (\S+) \[.*\], device (\d+):")


@dataclass(frozen=True)
class OutputCheck:
    """One output's check: ``reachable``, ``unreachable`` or ``skipped`` (while airing)."""

    name: str
    target: str
    result: str
    detail: str
    checked_at: datetime

    @property
    def reachable(self) -> bool:
        """Return True when the output answered."""
        return self.result == REACHABLE

    def as_dict(self) -> dict[str, Any]:
        """Return the check as JSON-ready data."""
        return {
            "name": self.name,
            "target": self.target,
            "result": self.result,
            "detail": self.detail,
            "checked_at": self.checked_at.isoformat(),
        }


# --- Icecast ---------------------------------------------------------------------------------


def icecast_target(settings: airing_settings.AiringSettings) -> str:
    """Return the ``host:port`` the Icecast check asks (no user, no password)."""
    return f"{settings.icecast_host}:{settings.icecast_port}"


def icecast_url(settings: airing_settings.AiringSettings) -> str:
    """Return the URL of the Icecast server's root page (not a mount)."""
    scheme = "https" if settings.icecast_tls else "http"
    return f"{scheme}://{icecast_target(settings)}/"


def probe_icecast(
    settings: airing_settings.AiringSettings, client: OutboundClient
) -> tuple[bool, str]:
    """Ask the Icecast server for its root page; return (reachable, what happened).

    Any HTTP answer within :data:`ICECAST_TIMEOUT` counts: the server is up and listening.
    """
    try:
        with client.open(
            icecast_url(settings), _ANSWER_LIMITS, max_redirects=0, ok=lambda status: True
        ) as response:
            status = int(response.status)
            response.close()  # the page itself is not needed
    except FetchError as ex:
        return False, f"no answer within {ICECAST_TIMEOUT:g} s: {ex.reason}"
    return True, f"the server answered (HTTP {status})"


# --- ALSA ------------------------------------------------------------------------------------


def _empty_wav(sample_rate: int) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
    return buffer.getvalue()


def _run(
    command: list[str], data: bytes = b"", timeout: float = ALSA_TIMEOUT
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(  # noqa: S603 - fixed arguments, no shell
        command, input=data, capture_output=True, timeout=timeout, check=False
    )


def _last_words(process: subprocess.CompletedProcess[bytes]) -> str:
    text = process.stderr.decode("utf-8", "replace").strip().splitlines()
    return text[-1][-200:] if text else f"exit {process.returncode}"


def device_listed(device: str, aplay: str) -> bool:
    """Tell whether ALSA lists ``device``: a PCM name of ``aplay -L``, or a card and device of
    ``aplay -l`` for the ``hw:N,M`` and ``plughw:N,M`` forms (card number or name)."""
    names = _run([aplay, "-L"])
    if names.returncode == 0:
        listed = {
            line.strip()
            for line in names.stdout.decode("utf-8", "replace").splitlines()
            if line and not line[0].isspace()
        }
        if device in listed:
            return True
    form = _CARD_FORM.match(device)
    if form is None:
        return False
    card, number = form.group(1), int(form.group(2) or 0)
    cards = _run([aplay, "-l"])
    for line in cards.stdout.decode("utf-8", "replace").splitlines():
        found = _CARD_LINE.match(line)
        if found and card in (found.group(1), found.group(2)) and int(found.group(3)) == number:
            return True
    return False


@contextmanager
def _always_free() -> Iterator[bool]:
    yield True


def probe_alsa(
    settings: airing_settings.AiringSettings,
    aplay: str | None = None,
    *,
    device_free: Callable[[], AbstractContextManager[bool]] = _always_free,
) -> tuple[str, str]:
    """Check that the ALSA device is listed and can be opened; return (result, why).

    ``device_free`` is entered around the opening only: it yields False (the result is then
    ``skipped``) while the device must not be touched, and holds it free while True.
    """
    program = aplay or shutil.which("aplay")
    if program is None:
        return UNREACHABLE, "aplay is not installed (Debian package alsa-utils)"
    device = settings.alsa_device
    try:
        if not device_listed(device, program):
            return UNREACHABLE, f"ALSA does not list the device {device}"
        with device_free() as free:
            if not free:
                return SKIPPED, "a message is on the air"
            opened = _run(
                [program, "-q", "-D", device, "-t", "wav", "-"],
                _empty_wav(settings.sample_rate),
                timeout=OPEN_TIMEOUT,
            )
    except subprocess.TimeoutExpired:
        return UNREACHABLE, "aplay did not answer in time"
    except OSError as ex:
        return UNREACHABLE, f"aplay could not start: {ex}"
    if opened.returncode != 0:
        return UNREACHABLE, f"the device {device} cannot be opened: {_last_words(opened)}"
    return REACHABLE, f"the device {device} is listed and opens"


# --- the check -------------------------------------------------------------------------------


def message_airing(conn: Connection) -> bool:
    """Return True while a message is on the air (a queue item in state ``airing``)."""
    q = eas_airing_queue.c
    return conn.execute(select(q.id).where(q.state == "airing").limit(1)).first() is not None


def _store(engine: Engine, checks: list[OutputCheck]) -> None:
    kept = [check for check in checks if check.result != SKIPPED]
    if not kept:
        return
    with begin_write(engine) as conn:
        conn.execute(
            delete(eas_output_health).where(eas_output_health.c.name.in_([c.name for c in kept]))
        )
        conn.execute(
            insert(eas_output_health),
            [
                {
                    "name": check.name,
                    "target": check.target,
                    "reachable": check.reachable,
                    "detail": check.detail[:1000],
                    "checked_at": check.checked_at,
                }
                for check in kept
            ],
        )


def check_outputs(
    engine: Engine,
    *,
    client: OutboundClient,
    clock: Callable[[], datetime],
    aplay: str | None = None,
) -> list[OutputCheck]:
    """Check every enabled real output once, store each result, and return them.

    Icecast and ALSA are checked when enabled; a disabled output is not. The ALSA check is
    skipped (``skipped``, nothing stored) while a message airs.
    """
    with engine.connect() as conn:
        settings = airing_settings.load(conn)
    checks: list[OutputCheck] = []
    if settings.icecast_enabled:
        ok, detail = probe_icecast(settings, client)
        checks.append(
            OutputCheck(
                "icecast",
                icecast_target(settings),
                REACHABLE if ok else UNREACHABLE,
                detail,
                clock(),
            )
        )
    if settings.alsa_enabled:
        checks.append(_check_alsa(engine, settings, clock, aplay))
    _store(engine, checks)
    return checks


def _check_alsa(
    engine: Engine,
    settings: airing_settings.AiringSettings,
    clock: Callable[[], datetime],
    aplay: str | None,
) -> OutputCheck:
    @contextmanager
    def device_free() -> Iterator[bool]:
        with engine.connect() as conn:
            airing = message_airing(conn)
        if airing or not DEVICE_LOCK.acquire(blocking=False):
            yield False
            return
        try:
            yield True
        finally:
            DEVICE_LOCK.release()

    result, detail = probe_alsa(settings, aplay, device_free=device_free)
    return OutputCheck("alsa", settings.alsa_device, result, detail, clock())


def stored_health(conn: Connection) -> dict[str, dict[str, Any]]:
    """Return the last stored result of each output by name: target, reachable, detail, when."""
    rows = conn.execute(select(eas_output_health)).all()
    return {row.name: dict(row._mapping) for row in rows}


# --- the worker's job ------------------------------------------------------------------------


@functools.cache
def _client() -> OutboundClient:
    return OutboundClient()


_rounds = RoundRunner("output-health", log, "output health: the check failed")


def output_health_job(station: Station) -> None:
    """Check the outputs in a thread of its own, unless the last check still runs.

    A slow Icecast server (up to :data:`ICECAST_TIMEOUT`) never delays the worker's other jobs.
    """

    def run() -> None:
        for check in check_outputs(station.engine, client=_client(), clock=station.clock):
            if check.result == UNREACHABLE:
                log.warning("EAS output %s is unreachable: %s", check.name, check.detail)

    _rounds.start(run)


def wait_for_output_health_job(timeout: float | None = None) -> None:
    """Wait until the check started by :func:`output_health_job` has finished."""
    _rounds.wait(timeout)
