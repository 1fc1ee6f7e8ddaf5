"""The worker's airing loop: play the queue, one message at a time, and honour Stop.

Messages reach the queue only through :func:`alertstation.eas.airing.broadcast.broadcast`.
:func:`run_once` claims the oldest queued message, plays it through every enabled output at once
(:mod:`alertstation.eas.airing.outputs`), with the saved transmitter relays keyed for the whole
message (:mod:`alertstation.eas.airing.relays`), and records a result per output and the
airing's state (:mod:`alertstation.eas.airing.queue`). While it plays, a watcher checks the
database for an operator's Stop every :data:`STOP_POLL_SECONDS`; on Stop every real output cuts
the message and sends the end of message, and the relays are released once the last EOM ended.
The worker hands the loop its leader lease (``leading``): nothing is claimed while the lease is
not confirmed, and a message on the air is cut the same way (``interrupted``) once it lapses, so a
leader cut off from the database stops airing before a standby may lead.
A national message relayed live (:mod:`alertstation.eas.airing.live`) plays its audio as it
arrives from the source; the archive then holds what aired and its length.
:func:`start_airing` runs the loop in a thread of the worker that leads. See docs/eas-airing.md.
"""

from __future__ import annotations

import logging
import threading
import time
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas import archive
from alertstation.eas.airing import live, relays
from alertstation.eas.airing import queue as airing
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.announce import announcer
from alertstation.eas.airing.outputs import (
    AirControl,
    LiveMessage,
    Message,
    OutputError,
    load_message,
    play_all,
)
from alertstation.eas.airing.outputs.build import build_outputs
from alertstation.eas.audio import render_eom
from alertstation.settings_admin.sections import hardware_settings

log = logging.getLogger("alertstation.eas")

POLL_SECONDS: Final[float] = 1.0
#: How often a playing message checks for Stop (the issue asks for at least every 250 ms).
STOP_POLL_SECONDS: Final[float] = 0.2
FINISH_TRIES: Final[int] = 4
EOM_HEADER: Final[str] = "NNNN"

Trace = Callable[[str], None]
Leading = Callable[[], bool]


def _log_trace(step: str) -> None:
    log.info("airing: %s", step)


def _air(station: Station, item: airing.QueueItem, control: AirControl) -> dict[str, Any]:
    """Play a claimed item through every enabled output; return each output's result."""
    with station.engine.connect() as conn:
        settings = settings_airing.load(conn)
        hardware = hardware_settings(conn)
    live_audio = live.take(item.archive_id)
    message: Message
    try:
        path = archive.wav_file(station.settings.data_dir, item.wav_path)
        if live_audio is not None:
            message = LiveMessage(item.header, live_audio)
        else:
            message = load_message(path, item.header)
    except (OutputError, ValueError) as ex:
        now = station.clock()
        return {"archive": {"ok": False, "error": str(ex), "started_at": now, "ended_at": now}}
    control.eom = archive.AiredMessage(
        EOM_HEADER, render_eom(sample_rate=message.sample_rate), message.sample_rate
    )
    outputs = build_outputs(settings, path, control=control, archive_only=item.archive_only)
    if live_audio is not None:
        live_audio.open([output.name for output in outputs])
    airing.start_outputs(
        station.engine, item.id, [output.name for output in outputs], station.clock()
    )
    station.airing.changed()
    real = [output for output in outputs if output.name in airing.REAL_OUTPUTS]
    if not real:  # nothing goes on the air: the transmitter stays unkeyed
        hardware = {**hardware, "relay_pins": []}
    results = _play_keyed(
        hardware, lambda: play_all(outputs, message, clock=station.clock), control.trace
    )
    if live_audio is not None:
        _record_length(station, item.archive_id, path)
    return results


def _record_length(station: Station, message_id: int, path: Path) -> None:
    """Record the length of a live message as the archive output kept it."""
    try:
        with wave.open(str(path), "rb") as kept:
            seconds = kept.getnframes() / kept.getframerate()
        with begin_write(station.engine) as conn:
            archive.set_duration(conn, message_id, seconds)
    except (OSError, EOFError, wave.Error):
        log.exception("the length of live message %s could not be recorded", message_id)


def _play_keyed(
    hardware: dict[str, Any],
    play: Callable[[], dict[str, Any]],
    trace: Trace = _log_trace,
) -> dict[str, Any]:
    """Run ``play`` with the saved relay pins closed (the transmitter keyed); open them after.

    No saved pins: just play. The relays are released whatever happens while playing, and only
    once ``play`` returned (after a stopped message's EOM). When the relays cannot be keyed (no
    GPIO, a pin fails) the message still plays on every output and the ``relays`` result says
    why.
    """
    pins = list(hardware["relay_pins"])
    if not pins:
        return play()
    results: dict[str, Any] | None = None
    relay_result: dict[str, Any] = {"ok": True, "error": None}
    try:
        with relays.keyed(relays.open_gpio(), pins, active_high=hardware["relay_active_high"]):
            results = play()
        trace("relays_released")
    except relays.GpioUnavailable as ex:
        relay_result = {"ok": False, "error": f"GPIO {pins}: {ex}"}
        log.error("transmitter relays on GPIO %s: %s", pins, ex)
    if results is None:  # keying failed before anything played: air it unkeyed
        results = play()
    return {**results, "relays": relay_result}


def _error_of(results: dict[str, Any]) -> str | None:
    failed = [f"{name}: {result['error']}" for name, result in results.items() if not result["ok"]]
    return "; ".join(failed) or None


def _finish(
    station: Station, item_id: int, state: str, error: str | None, results: dict[str, Any]
) -> None:
    """Record the outcome, retrying a few times: an item left airing would hold the queue."""
    for attempt in range(1, FINISH_TRIES + 1):
        try:
            airing.finish(
                station.engine,
                item_id,
                state=state,
                error=error,
                outputs=results,
                now=station.clock(),
                on_end=announcer(station.settings.data_dir),
            )
            return
        except Exception:
            if attempt == FINISH_TRIES:
                raise
            log.exception("recording the end of queue item %s failed; retrying", item_id)
            time.sleep(attempt)


class _StopWatcher:
    """Cut the outputs of the item on the air on an operator's Stop or the worker's shutdown.

    Both take the one Stop path: the outputs cut the message audio, send the end of message,
    and the relays are released once they return.
    """

    def __init__(
        self,
        station: Station,
        item_id: int,
        control: AirControl,
        interval: float,
        shutdown: threading.Event | None = None,
        leading: Leading | None = None,
    ) -> None:
        self._station = station
        self._item_id = item_id
        self._control = control
        self._interval = interval
        self._shutdown = shutdown or threading.Event()
        self._leading = leading
        self.by_shutdown = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="eas-stop-watch", daemon=True)
        # Its own thread: the Stop check's query may hang on a cut link; the lease check never.
        self._lease_thread = threading.Thread(
            target=self._watch_lease, name="eas-lease-watch", daemon=True
        )

    def __enter__(self) -> _StopWatcher:
        self._thread.start()
        if self._leading is not None:
            self._lease_thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=5)
        if self._lease_thread.is_alive():
            self._lease_thread.join(timeout=5)

    def _cut_by_worker(self, step: str) -> None:
        self.by_shutdown = True
        self._control.trace(step)
        self._control.cut.set()

    def _watch_lease(self) -> None:
        assert self._leading is not None
        while not self._done.wait(self._interval):
            if not self._leading():
                log.critical(
                    "the leader lock cannot be confirmed: cutting queue item %s", self._item_id
                )
                self._cut_by_worker("leadership_unconfirmed")
                return

    def _run(self) -> None:
        while not self._done.wait(self._interval):
            if self._control.cut.is_set():
                return
            if self._shutdown.is_set():
                log.warning("the worker is stopping: cutting queue item %s", self._item_id)
                self._cut_by_worker("shutdown")
                return
            try:
                asked = airing.stop_requested(self._station.engine, self._item_id)
            except Exception:
                log.exception("checking for Stop of queue item %s failed", self._item_id)
                continue
            if asked:
                self._control.trace("stop_recorded")
                log.warning("EAS message stopped by an operator (queue item %s)", self._item_id)
                self._control.cut.set()
                return


def run_once(
    station: Station,
    *,
    cancel: threading.Event | None = None,
    trace: Trace | None = None,
    stop_poll: float = STOP_POLL_SECONDS,
    leading: Leading | None = None,
) -> bool:
    """Air the oldest queued message, if any, and record how it went; True when one was taken.

    Blocks while the message plays (real time for Icecast and ALSA). ``cancel`` (the worker
    shutting down) takes the Stop path: the audio is cut, the end of message sent and the relays
    released, and the item is ``interrupted``. ``trace`` is told of each step of a Stop
    (``stop_recorded`` or ``shutdown``, ``audio_cut:<output>``, ``eom_sent:<output>``,
    ``relays_released``). ``leading`` (the worker's leader lease) is asked before the claim, and
    while the message plays: once it answers False nothing is claimed, and the message on the
    air is cut as on shutdown (``leadership_unconfirmed``) and recorded ``interrupted``.
    """
    if leading is not None and not leading():
        return False
    item = airing.claim_next(
        station.engine, station.clock(), on_end=announcer(station.settings.data_dir)
    )
    station.airing.changed()
    if item is None:
        return False
    log.warning("EAS message on the air (queue item %s): %s", item.id, item.header)
    control = AirControl(trace=trace or _log_trace)
    watcher = _StopWatcher(station, item.id, control, stop_poll, shutdown=cancel, leading=leading)
    try:
        with watcher:
            results = _air(station, item, control)
    except Exception as ex:  # never leave the item airing: it would hold the queue
        log.exception("airing queue item %s failed", item.id)
        now = station.clock()
        results = {
            "airing": {
                "ok": False,
                "error": f"{type(ex).__name__}: {ex}",
                "started_at": now,
                "ended_at": now,
            }
        }
    error = _error_of(results)
    state = airing.result_state(results, stopped=control.cut.is_set())
    if watcher.by_shutdown:
        state = airing.INTERRUPTED  # the worker stopping cut it short: not aired again
        error = error or airing.INTERRUPTED_ERROR
    _finish(station, item.id, state, error, results)
    station.airing.changed()
    if state == airing.FAILED:
        log.error("EAS message failed to air (queue item %s): %s", item.id, error)
    else:
        log.warning("EAS message %s (queue item %s): %s", state, item.id, item.header)
    return True


def recover(station: Station) -> list[int]:
    """Mark items a stopped worker left on the air interrupted; return their ids."""
    ids = airing.recover_interrupted(station.engine, station.clock())
    station.airing.changed()
    if ids:
        log.error("airing queue items %s were interrupted by a worker stop", ids)
    return ids


def airing_loop(
    station: Station,
    stop: threading.Event,
    poll_seconds: float = POLL_SECONDS,
    leading: Leading | None = None,
) -> None:
    """Recover interrupted items, then air queued messages one by one until ``stop`` is set.

    ``leading`` is the worker's leader lease (see :func:`run_once`).
    """
    try:
        recover(station)
    except Exception:
        log.exception("airing queue recovery failed")
    while not stop.is_set():
        try:
            took = run_once(station, cancel=stop, leading=leading)
        except Exception:
            log.exception("airing loop step failed")
            took = False
        if not took:
            stop.wait(poll_seconds)
    log.info("airing loop stopped")


def start_airing(
    station: Station, stop: threading.Event, leading: Leading | None = None
) -> threading.Thread:
    """Start :func:`airing_loop` in a daemon thread (the worker does this once it leads)."""
    thread = threading.Thread(
        target=airing_loop,
        args=(station, stop),
        kwargs={"leading": leading},
        name="eas-airing",
        daemon=True,
    )
    thread.start()
    return thread
