"""The one broadcast path: every message the station airs goes through :func:`broadcast`.

Its origins are ``manual`` (an operator's send), ``resend`` (an archived message again),
``forward`` (CAP-derived auto-forward), ``relay`` (a received SAME message with the station's
own header) and ``rwt`` (the weekly test). For each it:

1. refuses an operator's send (``operator=True``) with 409 ``no_output`` when no real output
   (Icecast, ALSA) is enabled, unless the operator chose ``archive_only``; automatic origins
   proceed and are recorded ``archived_only``;
2. renders the message at the airing sample rate (the origin's ``render`` function);
3. archives it (WAV, sidecar, ``eas_archive`` row) and queues it (``eas_airing_queue``) in one
   transaction; the worker's airing loop (:mod:`alertstation.eas.airing.onair`) plays it and
   records a result per output;
4. writes the ``eas.broadcast`` audit row (never failing the send once it is queued).

A national message relayed live comes with its :class:`~alertstation.eas.airing.live.LiveAudio`:
it is registered under the archived message's id in the queueing transaction, so the airing
loop finds it the moment it can claim the item (the archive holds the station's header,
attention signal and EOM until the aired audio replaces it).

No other module queues a message or plays an output (``tests/eas/test_broadcast_path.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from sqlalchemy import select

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import EAS_BROADCAST
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas import archive
from alertstation.eas.airing import live as live_audio
from alertstation.eas.airing import queue as airing
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.outputs import OutputError, load_message
from alertstation.eas.airing.outputs.build import real_outputs
from alertstation.eas.airing.tables import ORIGINS, eas_airing_queue
from alertstation.eas.tables import eas_activations
from alertstation.errors import Conflict, NotFound
from alertstation.same import ORIGINATORS

log = logging.getLogger("alertstation.eas")

NO_OUTPUT: Final[str] = "no_output"
NO_OUTPUT_MESSAGE: Final[str] = (
    "No audio output is set up; choose archive only to record it without airing"
)

Render = Callable[[int], archive.AiredMessage]


def enabled_outputs(station: Station) -> list[str]:
    """Return the names of the real outputs (``icecast``, ``alsa``) the settings enable."""
    with station.engine.connect() as conn:
        return real_outputs(settings_airing.load(conn))


def check_output(station: Station, *, archive_only: bool) -> None:
    """409 ``no_output`` when no real output is enabled and archive only was not chosen."""
    if not archive_only and not enabled_outputs(station):
        raise Conflict(NO_OUTPUT_MESSAGE, code=NO_OUTPUT)


def broadcast(
    station: Station,
    *,
    origin: str,
    render: Render,
    actor: Actor,
    target: str,
    aired_by: str | None,
    activation_id: int | None = None,
    archive_only: bool = False,
    operator: bool = False,
    details: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
    sample_rate: int | None = None,
    live: live_audio.LiveAudio | None = None,
) -> dict[str, Any]:
    """Render, archive, queue and audit one message; return its archive row with ``queue``.

    ``render`` gets the sample rate (the airing rate unless ``sample_rate`` is given) and
    returns the message. ``target`` and ``details`` (or a function giving them once the message
    is rendered) go into the ``eas.broadcast`` audit row, with the origin, header, message and
    queue ids. A draft activation named by
    ``activation_id`` is marked sent in the same transaction as the queueing. ``live`` (a
    national relay) is the audio the airing plays as it arrives.
    """
    if origin not in ORIGINS:
        raise ValueError(f"origin: {origin!r} is not one of {', '.join(ORIGINS)}")
    if operator:
        check_output(station, archive_only=archive_only)
    if sample_rate is None:
        with station.engine.connect() as conn:
            sample_rate = settings_airing.load(conn).sample_rate
    message = render(sample_rate)
    saved = _queue_message(
        station,
        message,
        aired_by=aired_by,
        activation_id=activation_id,
        origin=origin,
        archive_only=archive_only,
        live=live,
    )
    audit = {
        "origin": origin,
        "header": message.header,
        "message_id": saved["id"],
        "queue_id": saved["queue"]["id"],
        **((details() if callable(details) else details) or {}),
    }
    if archive_only:
        audit["archive_only"] = True
    _audit(station, actor, target, audit)
    return saved


def _queue_message(
    station: Station,
    message: archive.AiredMessage,
    *,
    aired_by: str | None,
    activation_id: int | None,
    origin: str,
    archive_only: bool,
    live: live_audio.LiveAudio | None = None,
) -> dict[str, Any]:
    """Archive ``message`` and queue it for airing in one transaction; return the archive row
    with a ``queue`` block (the item's ``id``, ``state`` and ``position``, 1 = on the air or
    next)."""
    queued_at = station.clock()
    data_dir = station.settings.data_dir
    wav_name = archive.write_files(data_dir, message, aired_by=aired_by, aired_at=queued_at)
    message_id: int | None = None
    try:
        with begin_write(station.engine) as conn:
            message_id = archive.insert_row(
                conn,
                header=message.header,
                wav_name=wav_name,
                sample_rate=message.sample_rate,
                duration=message.duration,
                activation_id=activation_id,
                aired_by=aired_by,
                aired_at=queued_at,
            )
            if live is not None:  # before the commit: the airing loop finds it once it can claim
                live_audio.attach(message_id, live)
            if activation_id is not None:
                conn.execute(
                    eas_activations.update()
                    .where(
                        eas_activations.c.id == activation_id, eas_activations.c.state == "draft"
                    )
                    .values(state="sent")
                )
            cut = airing.cut_for_national(conn, message.header, now=queued_at)
            item_id = airing.enqueue(conn, message_id, origin, queued_at, archive_only=archive_only)
            saved = archive.get_row(conn, message_id)
            place = airing.position(conn, item_id)
    except BaseException:
        if message_id is not None:
            live_audio.detach(message_id)
        archive.remove_files(data_dir, [wav_name])
        raise
    station.airing.changed()
    if cut is not None:
        log.warning("EAS queue item %s cut for a national message", cut.id)
    log.warning("EAS message queued for airing (%s, %s): %s", origin, aired_by, message.header)
    result = archive.row_as_dict(saved)
    result["queue"] = {"id": item_id, "state": airing.QUEUED, "position": place}
    return result


def _audit(station: Station, actor: Actor, target: str, details: dict[str, Any]) -> None:
    """Record ``eas.broadcast`` in its own transaction; a failure is logged, never raised."""
    try:
        station.ledger.record_now(
            station.engine, actor, EAS_BROADCAST, target=target, details=details
        )
    except Exception as ex:  # the message is queued: the send must still succeed
        log.critical("eas.broadcast audit write failed for %s: %r", target, ex)


def first_aired(conn: Any, message_id: int) -> str | None:
    """Return when an archived message first started on the air (ISO 8601), None if never."""
    started = conn.execute(
        select(eas_airing_queue.c.started_at)
        .where(
            eas_airing_queue.c.archive_id == message_id,
            eas_airing_queue.c.started_at.is_not(None),
        )
        .order_by(eas_airing_queue.c.id)
        .limit(1)
    ).scalar()
    return started.isoformat() if started is not None else None


def resend(
    station: Station, message_id: int, actor: Actor, *, archive_only: bool = False
) -> dict[str, Any]:
    """Air an archived message again, exactly as first sent, as a new archive row; audit it.

    An operator's resend: 409 ``no_output`` without a real output unless ``archive_only``.
    """
    with station.engine.connect() as conn:
        row = archive.get_row(conn, message_id)
        first = first_aired(conn, message_id) if row is not None else None
    if row is None:
        raise NotFound(f"No archived message {message_id}.")
    try:
        message = load_message(
            archive.wav_file(station.settings.data_dir, row.wav_path), row.header
        )
    except (OutputError, ValueError) as ex:
        raise Conflict(
            f"The audio of message {message_id} is missing from the archive.",
            code="audio_missing",
        ) from ex
    return broadcast(
        station,
        origin="resend",
        render=lambda _rate: message,
        actor=actor,
        target=f"eas_message:{message_id}",
        aired_by=actor.username,
        activation_id=row.activation_id,
        archive_only=archive_only,
        operator=True,
        details={"resend_of": message_id, "first_aired_at": first},
        sample_rate=message.sample_rate,
    )


def stop(station: Station, actor: Actor, *, clear_queue: bool) -> dict[str, Any]:
    """Ask the airing loop to stop the message on the air (and clear the queue); audit it.

    409 ``nothing_on_air`` when nothing is on the air. The audit row (``eas.broadcast`` with
    ``result: "stopped"`` and who) is written in the same transaction as the request.
    """
    with begin_write(station.engine) as conn:
        item, removed = airing.request_stop(
            conn, by=actor.username, now=station.clock(), clear_queue=clear_queue
        )
        station.ledger.record(
            conn,
            actor,
            EAS_BROADCAST,
            target=f"eas_queue:{item.id}",
            details={
                "result": airing.STOPPED,
                "stopped_by": actor.username,
                "header": item.header,
                "queue_id": item.id,
                "message_id": item.archive_id,
                "clear_queue": clear_queue,
                "removed": removed,
            },
        )
    station.airing.changed()
    log.warning("EAS message stop asked by %s (queue item %s)", actor.username, item.id)
    return {"stopping": item.id, "removed": removed}


def remove(station: Station, item_id: int, actor: Actor) -> dict[str, Any]:
    """Take a queued item off the queue before it airs (``removed``); audit it."""
    with begin_write(station.engine) as conn:
        item = airing.remove(conn, item_id, by=actor.username, now=station.clock())
        station.ledger.record(
            conn,
            actor,
            EAS_BROADCAST,
            target=f"eas_queue:{item_id}",
            details={
                "result": airing.REMOVED,
                "removed_by": actor.username,
                "header": item.header,
                "queue_id": item_id,
                "message_id": item.archive_id,
            },
        )
    station.airing.changed()
    log.warning("EAS queue item %s removed by %s", item_id, actor.username)
    return {"removed": item_id}


def confirmation(
    station: Station, header: str, duration: float, *, first_aired_at: str | None = None
) -> dict[str, Any]:
    """Return what a send confirmation names: event, originator, counties by name, the valid
    period (the purge), the message length, the real outputs it will air on (empty: archive
    only), and when it first aired (a resend)."""
    parts = header.split("+", 1)
    fields = parts[0].split("-")
    org = fields[1] if len(fields) > 1 else ""
    purge = airing.purge_delta(header)
    outputs = enabled_outputs(station)
    with station.engine.connect() as conn:
        first = datetime.fromisoformat(first_aired_at) if first_aired_at else None
        text = airing.plain_text(conn, header, first)
    areas = airing.area_names([code for code in fields[3:] if code])
    return {
        "header": header,
        "event": airing.event_name(header),
        "event_code": fields[2] if len(fields) > 2 else "",
        "originator": ORIGINATORS[org].name if org in ORIGINATORS else org,
        "originator_code": org,
        "areas": areas,
        "valid_minutes": int(purge.total_seconds() // 60) if purge is not None else None,
        "duration": round(duration, 1),
        "outputs": outputs,
        "archive_only_required": not outputs,
        "first_aired_at": first_aired_at,
        "text": text,
    }


def message_confirmation(station: Station, message_id: int) -> dict[str, Any]:
    """Return the resend confirmation of an archived message (404 when there is none)."""
    with station.engine.connect() as conn:
        row = archive.get_row(conn, message_id)
        first = first_aired(conn, message_id) if row is not None else None
    if row is None:
        raise NotFound(f"No archived message {message_id}.")
    return confirmation(station, row.header, row.duration, first_aired_at=first)
