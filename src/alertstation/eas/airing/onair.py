"""Put a rendered message on the air: the one entry point manual sends, resends and
auto-forward share, and the worker's airing loop that plays the queue.

:func:`air_message` archives the message (WAV + sidecar + ``eas_archive`` row) and queues it
(``eas_airing_queue``) in one transaction, then returns at once: a message sent while another
airs waits its turn. :func:`run_once` claims the oldest queued message, plays it through every
enabled output at once (:mod:`alertstation.eas.airing.outputs`), with the saved transmitter
relays keyed for the whole message (:mod:`alertstation.eas.airing.relays`), and records the result;
:func:`start_airing` runs it in a thread of the worker that leads. See docs/eas-airing.md.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas import archive
from alertstation.eas.airing import queue as airing
from alertstation.eas.airing import relays
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.outputs import OutputError, load_message, play_all
from alertstation.eas.airing.outputs.build import build_outputs
from alertstation.eas.airing.tables import ORIGINS
from alertstation.eas.tables import eas_activations
from alertstation.errors import Conflict, NotFound
from alertstation.settings_admin.sections import hardware_settings

log = logging.getLogger("alertstation.eas")

POLL_SECONDS: Final[float] = 1.0
FINISH_TRIES: Final[int] = 4


def air_message(
    station: Station,
    message: archive.AiredMessage,
    *,
    aired_by: str | None,
    activation_id: int | None = None,
    origin: str = "manual",
) -> dict[str, Any]:
    """Archive ``message`` and queue it for airing; return its archive row with a ``queue`` block.

    ``origin`` says where it came from (``manual``, ``resend``, ``forward``, ``rwt``). A draft
    activation named by ``activation_id`` is marked sent in the same transaction. The ``queue``
    block holds the queue item's ``id``, ``state`` and ``position`` (1 = on the air or next).
    """
    if origin not in ORIGINS:
        raise ValueError(f"origin: {origin!r} is not one of {', '.join(ORIGINS)}")
    queued_at = station.clock()
    data_dir = station.settings.data_dir
    wav_name = archive.write_files(data_dir, message, aired_by=aired_by, aired_at=queued_at)
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
            if activation_id is not None:
                conn.execute(
                    eas_activations.update()
                    .where(
                        eas_activations.c.id == activation_id, eas_activations.c.state == "draft"
                    )
                    .values(state="sent")
                )
            item_id = airing.enqueue(conn, message_id, origin, queued_at)
            saved = archive.get_row(conn, message_id)
            place = airing.position(conn, item_id)
    except BaseException:
        archive.remove_files(data_dir, [wav_name])
        raise
    station.airing.changed()
    log.warning("EAS message queued for airing (%s, %s): %s", origin, aired_by, message.header)
    result = archive.row_as_dict(saved)
    result["queue"] = {"id": item_id, "state": airing.QUEUED, "position": place}
    return result


def _air(station: Station, item: airing.QueueItem, cancel: threading.Event) -> dict[str, Any]:
    """Play a claimed item through every enabled output; return each output's result."""
    with station.engine.connect() as conn:
        settings = settings_airing.load(conn)
        hardware = hardware_settings(conn)
    try:
        path = archive.wav_file(station.settings.data_dir, item.wav_path)
        message = load_message(path, item.header)
    except (OutputError, ValueError) as ex:
        return {"archive": {"ok": False, "error": str(ex)}}
    outputs = build_outputs(settings, path, cancel=cancel)
    return _play_keyed(hardware, lambda: play_all(outputs, message))


def _play_keyed(hardware: dict[str, Any], play: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run ``play`` with the saved relay pins closed (the transmitter keyed); open them after.

    No saved pins: just play. The relays are released whatever happens while playing. When the
    relays cannot be keyed (no GPIO, a pin fails) the message still plays on every output, the
    ``relays`` result says why and the item is failed.
    """
    pins = list(hardware["relay_pins"])
    if not pins:
        return play()
    results: dict[str, Any] | None = None
    relay_result: dict[str, Any] = {"ok": True, "pins": pins}
    try:
        with relays.keyed(relays.open_gpio(), pins, active_high=hardware["relay_active_high"]):
            results = play()
    except relays.GpioUnavailable as ex:
        relay_result = {"ok": False, "pins": pins, "error": str(ex)}
        log.error("transmitter relays on GPIO %s: %s", pins, ex)
    if results is None:  # keying failed before anything played: air it unkeyed
        results = play()
    return {**results, "relays": relay_result}


def _error_of(results: dict[str, Any]) -> str | None:
    failed = [f"{name}: {result['error']}" for name, result in results.items() if not result["ok"]]
    return "; ".join(failed) or None


def _finish(station: Station, item_id: int, error: str | None, results: dict[str, Any]) -> None:
    """Record the outcome, retrying a few times: an item left airing would hold the queue."""
    for attempt in range(1, FINISH_TRIES + 1):
        try:
            airing.finish(
                station.engine, item_id, error=error, outputs=results, now=station.clock()
            )
            return
        except Exception:
            if attempt == FINISH_TRIES:
                raise
            log.exception("recording the end of queue item %s failed; retrying", item_id)
            time.sleep(attempt)


def run_once(station: Station, *, cancel: threading.Event | None = None) -> bool:
    """Air the oldest queued message, if any, and record how it went; True when one was taken.

    Blocks while the message plays (real time for Icecast and ALSA). ``cancel`` stops the
    outputs early (the item is then failed).
    """
    item = airing.claim_next(station.engine, station.clock())
    station.airing.changed()
    if item is None:
        return False
    log.warning("EAS message on the air (queue item %s): %s", item.id, item.header)
    try:
        results = _air(station, item, cancel or threading.Event())
    except Exception as ex:  # never leave the item airing: it would hold the queue
        log.exception("airing queue item %s failed", item.id)
        results = {"airing": {"ok": False, "error": f"{type(ex).__name__}: {ex}"}}
    error = _error_of(results)
    _finish(station, item.id, error, results)
    station.airing.changed()
    if error:
        log.error("EAS message failed to air (queue item %s): %s", item.id, error)
    else:
        log.warning("EAS message aired (queue item %s): %s", item.id, item.header)
    return True


def recover(station: Station) -> list[int]:
    """Fail items a stopped worker left on the air; return their ids (see airing module)."""
    ids = airing.recover_interrupted(station.engine, station.clock())
    station.airing.changed()
    if ids:
        log.error("airing queue items %s were interrupted by a worker stop; marked failed", ids)
    return ids


def airing_loop(
    station: Station, stop: threading.Event, poll_seconds: float = POLL_SECONDS
) -> None:
    """Recover interrupted items, then air queued messages one by one until ``stop`` is set."""
    try:
        recover(station)
    except Exception:
        log.exception("airing queue recovery failed")
    while not stop.is_set():
        try:
            took = run_once(station, cancel=stop)
        except Exception:
            log.exception("airing loop step failed")
            took = False
        if not took:
            stop.wait(poll_seconds)
    log.info("airing loop stopped")


def start_airing(station: Station, stop: threading.Event) -> threading.Thread:
    """Start :func:`airing_loop` in a daemon thread (the worker does this once it leads)."""
    thread = threading.Thread(
        target=airing_loop, args=(station, stop), name="eas-airing", daemon=True
    )
    thread.start()
    return thread


def resend(station: Station, message_id: int, actor: Actor) -> dict[str, Any]:
    """Air an archived message again, exactly as first sent, as a new archive row; audit it.

    Goes through :func:`air_message` like every other airing, so it
    queues behind a message on the air. Returns the new archive row with its ``queue`` block.
    """
    with station.engine.connect() as conn:
        row = archive.get_row(conn, message_id)
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
    saved = air_message(
        station,
        message,
        aired_by=actor.username,
        activation_id=row.activation_id,
        origin="resend",
    )
    archive.audit_broadcast(
        station,
        actor,
        f"eas_message:{message_id}",
        {
            "header": row.header,
            "message_id": saved["id"],
            "resend_of": message_id,
            "queue_id": saved["queue"]["id"],
        },
    )
    return saved
