"""The worker's delivery job: send pending notifications (apprise) and feed messages (HTTP).

This is the one module that imports apprise (through ``alertstation.lazy``, on the first
delivery): the web processes and the command line never load it. It is also, beside
``alertstation.http.outbound``, the one place that reaches the network for notifications
(apprise opens its own SMTP and HTTP connections).

:func:`delivery_job` runs :func:`send_due` in a thread of its own, as the alert poller does, so
the worker's other jobs (EAS forwarding among them) and the airing loop never wait for a slow
channel; apprise's own timeouts (seconds) and the feeds' deadline bound each attempt.

A failed attempt is tried again after 1, 2, 5, 10 and 30 minutes (:data:`RETRY_MINUTES`, on the
injected clock), then the delivery is logged ``failed`` with the last error, redacted.
Email channels (``mailto``/``mailtos``) get a notification's audio attached as MP3 (ffmpeg) up
to 10 MB; a larger file is described in the body instead.
"""

from __future__ import annotations

import json
import logging
import subprocess
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Engine, select, update

from alertstation import lazy
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.http.outbound import FetchError, OutboundClient
from alertstation.notifications import events as ev
from alertstation.notifications import feeds
from alertstation.notifications.redaction import APPRISE_FILTER, redact, secret_parts
from alertstation.notifications.tables import (
    notification_channels,
    notification_deliveries,
    notifications,
)
from alertstation.rounds import RoundRunner
from alertstation.settings_admin.sections import decoder_feed_settings

apprise = lazy.module("apprise")

log = logging.getLogger("alertstation.notifications")

#: Minutes between a failed attempt and the next; after the last, the delivery is ``failed``.
RETRY_MINUTES: Final[tuple[int, ...]] = (1, 2, 5, 10, 30)
MAX_ATTEMPTS: Final[int] = len(RETRY_MINUTES) + 1
#: The largest MP3 an email carries; a larger one is described in the body.
MAX_ATTACHMENT: Final[int] = 10 * 1024 * 1024
EMAIL_SCHEMES: Final[frozenset[str]] = frozenset({"mailto", "mailtos"})
#: Deliveries sent per round; the rest wait for the next round (seconds later).
BATCH: Final[int] = 50
#: Seconds apprise may spend connecting to / reading from a channel.
CONNECT_TIMEOUT, READ_TIMEOUT = 5.0, 15.0
FFMPEG_SECONDS: Final[float] = 60.0

_D = notification_deliveries.c
_N = notifications.c
_C = notification_channels.c


class DeliveryError(Exception):
    """One attempt failed; the message is safe to log (redacted). ``final``: never retry."""

    def __init__(self, message: str, *, final: bool = False) -> None:
        super().__init__(message)
        self.final = final


@dataclass(frozen=True)
class Outcome:
    """What one round did: deliveries sent, retried later and given up."""

    sent: int = 0
    retried: int = 0
    failed: int = 0


Sender = Callable[[Any, dict[str, Any]], None]


def mp3_of(wav: Path, folder: Path, ffmpeg: str = "ffmpeg") -> Path:
    """Encode ``wav`` as a mono 64 kb/s MP3 in ``folder``; raise DeliveryError on failure."""
    target = folder / (wav.stem + ".mp3")
    command = [ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i", str(wav),
               "-ac", "1", "-codec:a", "libmp3lame", "-b:a", "64k", str(target)]  # fmt: skip
    try:
        subprocess.run(command, check=True, capture_output=True, timeout=FFMPEG_SECONDS)
    except (OSError, subprocess.SubprocessError) as ex:
        raise DeliveryError(
            f"the audio could not be encoded as MP3 ({type(ex).__name__})"
        ) from None
    return target


def _email_audio(body: str, audio_path: str | None, folder: Path) -> tuple[str, list[str]]:
    """Return the email body and its attachments: the MP3 when it is at most 10 MB."""
    if not audio_path:
        return body, []
    wav = Path(audio_path)
    if not wav.is_file():
        return body + "\n\n(The audio is no longer in the station's archive.)", []
    mp3 = mp3_of(wav, folder)
    size = mp3.stat().st_size
    if size > MAX_ATTACHMENT:
        megabytes = size / (1024 * 1024)
        note = (f"\n\nThe aired audio ({wav.name}, {megabytes:.1f} MB as MP3) is larger than "
                "10 MB, so it is not attached; it is kept in the station's archive.")  # fmt: skip
        return body + note, []
    return body, [str(mp3)]


def send_apprise(url: str, title: str, body: str, attachments: list[str]) -> None:
    """Send one message through apprise; raise DeliveryError with apprise's redacted reason."""
    APPRISE_FILTER.add(url)
    secrets = secret_parts(url)
    # apprise's e-mail plugin loads ``imghdr``, deprecated since Python 3.11: not our warning.
    with warnings.catch_warnings(), apprise.LogCapture(level=logging.WARNING) as captured:
        warnings.simplefilter("ignore", DeprecationWarning)
        sender = apprise.Apprise()
        plugin = apprise.Apprise.instantiate(url)
        if plugin is None:
            raise DeliveryError("apprise does not understand the channel's URL")
        plugin.socket_connect_timeout = CONNECT_TIMEOUT
        plugin.socket_read_timeout = READ_TIMEOUT
        sender.add(plugin)
        attach = apprise.AppriseAttachment(attachments) if attachments else None
        ok = sender.notify(body=body, title=title, attach=attach)
        text = captured.getvalue()
    if not ok:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        reason = redact(lines[-1], secrets) if lines else "apprise reported a failure"
        raise DeliveryError(reason[:500])


def _send_channel(row: Any, url: str, send: Callable[[str, str, str, list[str]], None]) -> None:
    body = row.body
    with tempfile.TemporaryDirectory(prefix="notify-") as folder:
        attachments: list[str] = []
        if url.split("://", 1)[0].lower() in EMAIL_SCHEMES:
            body, attachments = _email_audio(body, row.audio_path, Path(folder))
        send(url, row.subject, body, attachments)


def _due(engine: Engine, now: datetime) -> list[Any]:
    query = (
        select(
            _D.id,
            _D.feed,
            _D.payload,
            _D.attempts,
            _D.channel_id,
            _N.subject,
            _N.body,
            _N.audio_path,
            _C.url,
        )  # fmt: skip
        .select_from(
            notification_deliveries.outerjoin(notifications).outerjoin(
                notification_channels, _C.id == _D.channel_id
            )
        )
        .where(_D.state == ev.PENDING, _D.next_attempt_at <= now)
        .order_by(_D.next_attempt_at, _D.id)
        .limit(BATCH)
    )
    with engine.connect() as conn:
        return list(conn.execute(query).all())


def _record(
    engine: Engine, row: Any, error: str | None, now: datetime, *, final: bool = False
) -> str:
    attempts = row.attempts + 1
    if error is None:
        values: dict[str, Any] = {"state": ev.SENT, "finished_at": now, "error": None}
    elif final or attempts >= MAX_ATTEMPTS:
        values = {"state": ev.DELIVERY_FAILED, "finished_at": now, "error": error}
    else:
        retry_at = now + timedelta(minutes=RETRY_MINUTES[attempts - 1])
        values = {"next_attempt_at": retry_at, "error": error}
    with begin_write(engine) as conn:
        conn.execute(
            update(notification_deliveries)
            .where(_D.id == row.id)
            .values(attempts=attempts, **values)
        )
    return str(values.get("state", ev.PENDING))


def send_due(
    engine: Engine,
    *,
    clock: Callable[[], datetime],
    client: OutboundClient | None = None,
    send: Callable[[str, str, str, list[str]], None] = send_apprise,
) -> Outcome:
    """Send every delivery that is due now (at most :data:`BATCH`); return what happened."""
    now = clock()
    rows = _due(engine, now)
    if not rows:
        return Outcome()
    own_client = client is None
    client = client or OutboundClient()
    counts = {ev.SENT: 0, ev.PENDING: 0, ev.DELIVERY_FAILED: 0}
    feed_settings: dict[str, Any] | None = None
    try:
        for row in rows:
            error, final = None, False
            try:
                if row.feed is not None:
                    if feed_settings is None:
                        with engine.connect() as conn:
                            feed_settings = decoder_feed_settings(conn)
                    feeds.send(client, feed_settings, row.feed, json.loads(row.payload), row.id)
                elif row.url is None:
                    raise DeliveryError("the channel was removed", final=True)
                else:
                    _send_channel(row, row.url, send)
            except FetchError as ex:
                error = ex.reason
            except DeliveryError as ex:
                error, final = str(ex), ex.final
            except ValueError as ex:
                error = str(ex)
            except Exception as ex:  # noqa: BLE001 - one broken channel never stops the rest
                error = f"{type(ex).__name__} while sending"
                log.exception("notification delivery %s: unexpected failure", row.id)
            state = _record(engine, row, error, clock(), final=final)
            counts[state] += 1
            if error is not None:
                log.warning(
                    "notification delivery %s to %s: attempt %s failed: %s",
                    row.id, row.feed or f"channel {row.channel_id}", row.attempts + 1, error,
                )  # fmt: skip
    finally:
        if own_client:
            client.close()
    return Outcome(counts[ev.SENT], counts[ev.PENDING], counts[ev.DELIVERY_FAILED])


_rounds = RoundRunner("notification-delivery", log, "notification delivery: the round failed")


def start_delivery(engine: Engine, clock: Callable[[], datetime]) -> bool:
    """Start a round of :func:`send_due` in its own thread unless one still runs; True if so."""
    return _rounds.start(lambda: send_due(engine, clock=clock))


def wait_for_delivery(timeout: float | None = None) -> None:
    """Wait until the round started by :func:`start_delivery` has finished."""
    _rounds.wait(timeout)


def delivery_job(station: Station) -> None:
    """The worker's job: start a delivery round (in its own thread) unless one still runs."""
    start_delivery(station.engine, station.clock)
