"""The audio monitor: every source in its own thread, decoded by ffmpeg to mono PCM at one rate.

It runs in the worker leader (``start_monitor``). For a ``stream`` source the station fetches
the stream itself through the outbound client (credentials in request headers, never on a command
line), strips ICY metadata (keeping the title) and pipes the bytes into ffmpeg's standard input;
for a ``receiver`` the allowlisted program's standard output is ffmpeg's input. ffmpeg writes
signed 16-bit mono PCM at ``MonitorSettings.sample_rate``, which feeds the level meter (silence
and clipping alerts) and any listeners (the SAME monitor, the rolling archive). A listener with
an ``end_session(source_id)`` method hears when a source's session ends, and one with
``close()`` when the monitor stops.

States, written to ``audio_sources`` so every web process shows them:

``starting``      connecting for the first time (or after a restart);
``running``       audio is flowing;
``reconnecting``  5xx, a reset, a timeout, a stall or the end of the stream: retried after an
                  exponential backoff with full jitter, capped;
``fatal``         401, 403 or 404 (or a receiver program that cannot start): no retry until
                  someone restarts the source; ``error_message`` carries the status;
``stopped``       the source is disabled.

A restart (``restart_generation`` changed by a web process) ends the session at once and starts
again from ``starting``. ``source_down`` opens when a source goes fatal or keeps reconnecting
longer than ``source_down_after`` seconds, and ends when audio flows again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import select
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import IO, Any

import numpy as np
from sqlalchemy import Row
from sqlalchemy import select as sql_select

from alertstation.audio import alerts
from alertstation.audio.archive import ArchiveRecorder
from alertstation.audio.levels import LevelMeter, Levels
from alertstation.audio.preflight import describe_status, headers_for, resolve_stream
from alertstation.audio.same_monitor import SameMonitor
from alertstation.audio.settings import get_audio_settings
from alertstation.audio.sources import (
    SourceConfig,
    SourceError,
    check_command,
    receiver_format,
    set_status,
)
from alertstation.audio.tables import ERROR_WIDTH, TITLE_WIDTH, audio_sources
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.http.outbound import FetchError, Limits, OutboundClient
from alertstation.settings_admin.sections import hardware_settings

log = logging.getLogger("alertstation.audio.monitor")

FATAL_STATUSES = frozenset({401, 403, 404})
#: The media fetch: no size limit and no deadline (a stream never ends), a read timeout.
STREAM_LIMITS = Limits(
    connect_timeout=10.0, read_timeout=20.0, max_bytes=1 << 62, deadline=float("inf")
)
READ_BYTES = 16 * 1024
_C = audio_sources.c


@dataclass(frozen=True)
class MonitorSettings:
    """Tunables of the monitor (seconds unless named otherwise)."""

    sample_rate: int = 22_050
    chunk_seconds: float = 0.1
    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    persist_every: float = 1.0
    rescan_every: float = 2.0
    stall_timeout: float = 20.0
    silence_threshold_dbfs: float = -50.0
    silence_seconds: float = 10.0
    silence_hysteresis_db: float = 3.0
    clipping_samples: int = 10  # clipped samples in one block that open a clipping alert
    clipping_clear_seconds: float = 10.0
    source_down_after: float = 60.0
    ffmpeg: str = "ffmpeg"


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Return the wait before retry ``attempt`` (0-based): full jitter over a capped doubling."""
    return rng.uniform(0.0, min(cap, base * (2.0 ** min(attempt, 30))))


class UpstreamError(Exception):
    """A session ended: ``message`` is safe to show; ``fatal`` stops the restart loop."""

    def __init__(self, message: str, *, status: int | None = None, fatal: bool = False) -> None:
        super().__init__(message)
        self.message = message[:ERROR_WIDTH]
        self.status = status
        self.fatal = fatal or status in FATAL_STATUSES

    @classmethod
    def from_fetch(cls, ex: FetchError) -> UpstreamError:
        return cls(describe_status(ex.status, ex.reason), status=ex.status)


class Restart(Exception):
    """Someone asked for a restart, or the monitor is stopping."""


class IcySplitter:
    """Separate ICY metadata blocks from the audio bytes of a stream (``icy-metaint``)."""

    def __init__(self, metaint: int) -> None:
        self.metaint = metaint
        self._until_meta = metaint
        self._meta_left = -1  # -1: not inside a metadata block
        self._meta = bytearray()
        self.title: str | None = None

    def feed(self, data: bytes) -> bytes:
        """Return the audio bytes of ``data``; remember the last StreamTitle seen."""
        if self.metaint <= 0:
            return data
        audio = bytearray()
        view = memoryview(data)
        while view:
            if self._meta_left < 0 and self._until_meta > 0:
                take = min(self._until_meta, len(view))
                audio += view[:take]
                view = view[take:]
                self._until_meta -= take
            elif self._meta_left < 0:
                self._meta_left = view[0] * 16
                view = view[1:]
                self._meta.clear()
            else:
                take = min(self._meta_left, len(view))
                self._meta += view[:take]
                view = view[take:]
                self._meta_left -= take
            if self._meta_left == 0:
                self._read_title(bytes(self._meta))
                self._meta_left = -1
                self._until_meta = self.metaint
        return bytes(audio)

    def _read_title(self, block: bytes) -> None:
        text = block.rstrip(b"\x00").decode("utf-8", "replace")
        marker = "StreamTitle='"
        start = text.find(marker)
        if start < 0:
            return
        end = text.find("';", start + len(marker))
        title = text[start + len(marker) : end if end >= 0 else None]
        self.title = "".join(ch for ch in title if ch.isprintable())[:TITLE_WIDTH]


AudioListener = Callable[[int, np.ndarray, int], None]  # (source id, int16 chunk, first sample)


class SourceRunner:
    """Monitor one source until ``halt`` or the monitor's ``stop`` is set."""

    def __init__(
        self,
        station: Station,
        source_id: int,
        stop: threading.Event,
        settings: MonitorSettings,
        client: OutboundClient,
        listeners: list[AudioListener] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.station = station
        self.source_id = source_id
        self.stop = stop
        self.halt = threading.Event()
        self.settings = settings
        self.client = client
        self.listeners = listeners or []
        self.rng = rng or random.Random()
        self._restart_seen: int | None = None
        self._state: str | None = None
        self.history: list[str] = []  # every state written, in order
        self._down_since: float | None = None

    # --- the loop -----------------------------------------------------------------------------

    def halted(self) -> bool:
        """Tell whether this runner must end."""
        return self.stop.is_set() or self.halt.is_set()

    def wait(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking at once when halted."""
        deadline = time.monotonic() + seconds
        while not self.halted():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.halt.wait(min(left, 0.5))

    def run(self) -> None:
        """Connect, listen, and reconnect or stop as the states above say."""
        attempt = 0
        while not self.halted():
            row = self._load()
            if row is None:
                return  # deleted
            self._restart_seen = row.restart_generation
            if not row.enabled:
                self._set_state("stopped", None)
                self._wait_for_restart()
                continue
            if self._state not in ("reconnecting",):
                self._set_state("starting", None)
            heard = False
            try:
                heard = self._session(row)
                error = UpstreamError("the stream ended")
            except Restart:
                attempt = 0
                self._state = None
                continue
            except UpstreamError as ex:
                error = ex
            except Exception as ex:  # noqa: BLE001 - a session must never kill the runner
                log.exception("audio source %s: session failed", self.source_id)
                error = UpstreamError(f"internal error: {type(ex).__name__}")
            if self.halted():
                return
            if heard:
                attempt = 0
            if error.fatal:
                self._down_or_up("fatal", error.message, down=True)
                self._wait_for_restart()
                attempt = 0
                continue
            self._set_state("reconnecting", error.message)
            self._note_down(error.message)
            self.wait(
                backoff_delay(
                    attempt, self.settings.backoff_base, self.settings.backoff_cap, self.rng
                )
            )
            attempt += 1

    def _wait_for_restart(self) -> None:
        while not self.halted():
            self.wait(self.settings.rescan_every)
            row = self._load()
            if row is None or row.restart_generation != self._restart_seen:
                return

    def _restart_requested(self) -> bool:
        row = self._load()
        return row is None or row.restart_generation != self._restart_seen

    # --- one session --------------------------------------------------------------------------

    def _session(self, row: Row[Any]) -> bool:
        """Listen until the input ends or fails; return whether any audio was heard."""
        config = SourceConfig.from_row(row)
        self._apply_saved_settings()
        rate = self.settings.sample_rate
        output = ["-vn", "-ac", "1", "-ar", str(rate), "-f", "s16le", "pipe:1"]
        ffmpeg = [self.settings.ffmpeg, "-hide_banner", "-nostats", "-loglevel", "error"]
        with contextlib.ExitStack() as stack:
            failures: list[UpstreamError] = []
            if config.kind == "stream":
                response = self._open_stream(config, stack)
                splitter = IcySplitter(_int(response.headers.get("icy-metaint")))
                decoder = self._spawn([*ffmpeg, "-i", "pipe:0", *output], subprocess.PIPE, stack)
                assert decoder.stdin is not None
                pump = threading.Thread(
                    target=self._pump,
                    args=(response, splitter, decoder.stdin, failures),
                    name=f"audio-fetch-{self.source_id}",
                    daemon=True,
                )
                pump.start()
                stack.callback(pump.join, 5)
                stack.callback(response.close)
            else:
                splitter = None
                receiver_rate, channels = receiver_format(config)
                self._check_receiver(config)
                program = self._spawn(list(config.command), subprocess.DEVNULL, stack)
                raw = ["-f", "s16le", "-ar", str(receiver_rate), "-ac", str(channels)]
                decoder = self._spawn(
                    [*ffmpeg, *raw, "-i", "pipe:0", *output], program.stdout, stack
                )
                assert program.stdout is not None
                program.stdout.close()  # ffmpeg holds it now
            stack.callback(self._end_listeners)
            heard = self._listen(decoder, splitter)
            if failures:
                raise failures[0]
            return heard

    def _check_receiver(self, config: SourceConfig) -> None:
        """Hold a receiver's stored command to the allowlist and capture devices of now.

        Checked before every spawn, so a command stored under a wider allowlist (or naming a
        capture device since removed) stops: the source turns ``fatal`` with the reason.
        """
        with self.station.engine.connect() as conn:
            devices = hardware_settings(conn)["capture_devices"]
        try:
            check_command(list(config.command), self.station.settings.receiver_allowlist, devices)
        except SourceError as ex:
            raise UpstreamError(f"receiver refused: {ex}", fatal=True) from None

    def _end_listeners(self) -> None:
        """Tell the listeners that keep per-session state (the archive) that the session ended."""
        for listener in self.listeners:
            end = getattr(listener, "end_session", None)
            if end is not None:
                try:
                    end(self.source_id)
                except Exception:  # noqa: BLE001 - a listener must never stop monitoring
                    log.exception("audio source %s: a listener failed", self.source_id)

    def _apply_saved_settings(self) -> None:
        """Take the decoder-monitor thresholds saved on the settings page (not the rate)."""
        with self.station.engine.connect() as conn:
            saved = get_audio_settings(conn)
        self.settings = replace(
            self.settings,
            silence_threshold_dbfs=saved.silence_threshold_dbfs,
            silence_seconds=saved.silence_seconds,
            silence_hysteresis_db=saved.silence_hysteresis_db,
            clipping_samples=saved.clipping_samples,
            source_down_after=saved.source_down_after_seconds,
        )

    def _open_stream(self, config: SourceConfig, stack: contextlib.ExitStack) -> Any:
        try:
            url = resolve_stream(self.client, config)
            headers = headers_for(config, url, {"Icy-MetaData": "1"})
            return stack.enter_context(self.client.open(url, STREAM_LIMITS, headers=headers))
        except FetchError as ex:
            raise UpstreamError.from_fetch(ex) from None

    def _spawn(self, argv: list[str], stdin: Any, stack: contextlib.ExitStack) -> subprocess.Popen:
        try:
            process = subprocess.Popen(
                argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError as ex:
            raise UpstreamError(
                f"cannot start {os.path.basename(argv[0])}: {ex.strerror}", fatal=True
            ) from None
        stack.callback(_end_process, process)
        return process

    def _pump(
        self, response: Any, splitter: IcySplitter, sink: IO[bytes], failures: list[UpstreamError]
    ) -> None:
        """Copy the stream's audio bytes into ffmpeg; record why it stopped."""
        try:
            while not self.halted():
                data = response.read1(READ_BYTES)
                if not data:
                    failures.append(UpstreamError("the stream ended"))
                    return
                sink.write(splitter.feed(data))
                sink.flush()
        except (BrokenPipeError, ValueError):
            failures.append(UpstreamError("the decoder stopped"))
        except Exception as ex:  # noqa: BLE001 - urllib3 raises many kinds
            failures.append(UpstreamError(f"connection lost: {type(ex).__name__}"))
        finally:
            with contextlib.suppress(OSError, ValueError):
                sink.close()

    def _listen(self, decoder: subprocess.Popen, splitter: IcySplitter | None) -> bool:
        settings = self.settings
        assert decoder.stdout is not None
        fd = decoder.stdout.fileno()
        chunk_bytes = 2 * max(1, round(settings.sample_rate * settings.chunk_seconds))
        meter = LevelMeter(
            settings.sample_rate,
            threshold_dbfs=settings.silence_threshold_dbfs,
            min_silence_seconds=settings.silence_seconds,
            hysteresis_db=settings.silence_hysteresis_db,
        )
        pending = b""
        heard = False
        last_audio = time.monotonic()
        self._next_persist = 0.0
        self._level: float | None = None
        self._peak: float | None = None
        self._last_clip = -1.0
        while not self.halted():
            ready, _, _ = select.select([fd], [], [], 0.5)
            now = time.monotonic()
            if not ready:
                if now - last_audio > settings.stall_timeout:
                    raise UpstreamError(f"no audio for {settings.stall_timeout:g} s")
                self._maybe_persist(now, None, persist=False)
                continue
            data = os.read(fd, chunk_bytes)
            if not data:
                return heard
            pending += data
            usable = len(pending) - len(pending) % 2
            samples = np.frombuffer(pending[:usable], dtype="<i2").astype(np.int16)
            pending = pending[usable:]
            if not samples.size:
                continue
            first = meter.position
            found = meter.feed(samples)
            for listener in self.listeners:
                listener(self.source_id, samples, first)
            last_audio = now
            if not heard:
                heard = True
                self._running()
            self._judge(found, now)
            self._maybe_persist(now, splitter.title if splitter else None, persist=True)
        return heard

    def _judge(self, found: Levels, now: float) -> None:
        """Open or end the silence and clipping alerts for what one chunk finished."""
        if len(found):
            self._level = float(found.rms_dbfs[-1])
            peak = float(found.peak_dbfs.max())
            self._peak = peak if self._peak is None else max(self._peak, peak)
            if int(found.clipped.max()) >= self.settings.clipping_samples:
                if self._last_clip < 0:
                    self._alert("clipping", open_=True, detail="samples at full scale")
                self._last_clip = now
        if self._last_clip >= 0 and now - self._last_clip > self.settings.clipping_clear_seconds:
            self._alert("clipping", open_=False)
            self._last_clip = -1.0
        for kind, _ in found.events:
            self._alert("silence", open_=kind == "start")

    def _maybe_persist(self, now: float, title: str | None, *, persist: bool) -> None:
        """Every ``persist_every`` s: write the level (when hearing) and look for a restart."""
        if now < self._next_persist:
            return
        self._next_persist = now + self.settings.persist_every
        if persist:
            self._persist(self._level, self._peak, title)
            self._peak = None  # the next write holds the peak of the next interval
        if self._restart_requested():
            raise Restart

    # --- the database -------------------------------------------------------------------------

    def _load(self) -> Row[Any] | None:
        with self.station.engine.connect() as conn:
            return conn.execute(sql_select(audio_sources).where(_C.id == self.source_id)).first()

    def _write(self, **values: Any) -> None:
        with begin_write(self.station.engine) as conn:
            set_status(conn, self.source_id, **values)

    def _set_state(self, state: str, message: str | None) -> None:
        values = self._enter(state, message, self.station.clock())
        if values:
            self._write(**values)

    def _enter(self, state: str, message: str | None, now: datetime) -> dict[str, Any]:
        """Note a new state; return the columns to write for it (none when nothing changed)."""
        if state == self._state and state != "reconnecting":
            return {}
        if state != self._state:
            log.info(
                "audio source %s: %s%s", self.source_id, state, f" ({message})" if message else ""
            )
        self._state = state
        self.history.append(state)
        return {"state": state, "error_message": message, "state_changed_at": now}

    def _running(self) -> None:
        self._down_since = None
        self._down_or_up("running", None, down=False)

    def _down_or_up(self, state: str, message: str | None, *, down: bool) -> None:
        """Enter ``state`` and open (``down``) or end source_down in one transaction.

        One transaction, so no reader ever sees a fatal source without source_down or a running
        one with it still open. Audio flowing (not ``down``) also writes the last audio time.
        """
        now = self.station.clock()
        values = self._enter(state, message, now)
        with begin_write(self.station.engine) as conn:
            if down:
                alerts.open_alert(conn, self.source_id, "source_down", now, message)
            else:
                alerts.end_alert(conn, self.source_id, "source_down", now)
                values["last_audio_at"] = now
            if values:
                set_status(conn, self.source_id, **values)

    def _persist(self, level: float | None, peak: float | None, title: str | None) -> None:
        values: dict[str, Any] = {"last_audio_at": self.station.clock(), "level_dbfs": level}
        if peak is not None:  # no block finished since the last write: the last peak stands
            values["peak_dbfs"] = peak
        if title is not None:
            values["icy_title"] = title
        self._write(**values)

    def _alert(self, kind: str, *, open_: bool, detail: str | None = None) -> None:
        now = self.station.clock()
        with begin_write(self.station.engine) as conn:
            if open_:
                alerts.open_alert(conn, self.source_id, kind, now, detail)
            else:
                alerts.end_alert(conn, self.source_id, kind, now)

    def _note_down(self, message: str) -> None:
        now = time.monotonic()
        if self._down_since is None:
            self._down_since = now
        elif now - self._down_since >= self.settings.source_down_after:
            self._alert("source_down", open_=True, detail=message)


def _int(value: Any) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


def _end_process(process: subprocess.Popen) -> None:
    """Stop a child: terminate, then kill; always reap it and close its pipes."""
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.close()
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


class AudioMonitor:
    """Keep one :class:`SourceRunner` thread per source, as sources come and go."""

    def __init__(
        self,
        station: Station,
        stop: threading.Event,
        settings: MonitorSettings | None = None,
        client: OutboundClient | None = None,
        listeners: list[AudioListener] | None = None,
    ) -> None:
        self.station = station
        self.stop = stop
        self.settings = settings or MonitorSettings()
        self.client = client or OutboundClient()
        self.listeners = listeners or []
        self.runners: dict[int, tuple[SourceRunner, threading.Thread]] = {}

    def sync(self) -> None:
        """Start runners for new sources, halt those of deleted ones, reap finished ones."""
        with self.station.engine.connect() as conn:
            ids = set(conn.execute(sql_select(_C.id)).scalars().all())
        for source_id, (runner, thread) in list(self.runners.items()):
            if source_id not in ids:
                runner.halt.set()
            if not thread.is_alive():
                del self.runners[source_id]
        for source_id in sorted(ids - set(self.runners)):
            runner = SourceRunner(
                self.station, source_id, self.stop, self.settings, self.client, self.listeners
            )
            thread = threading.Thread(
                target=runner.run, name=f"audio-source-{source_id}", daemon=True
            )
            thread.start()
            self.runners[source_id] = (runner, thread)

    def run(self) -> None:
        """Rescan the sources until ``stop``; then wait for the runners to end."""
        try:
            while not self.stop.is_set():
                try:
                    self.sync()
                except Exception:  # noqa: BLE001 - a database hiccup must not end monitoring
                    log.exception("audio monitor: rescan failed")
                self.stop.wait(self.settings.rescan_every)
        finally:
            for runner, _ in self.runners.values():
                runner.halt.set()
            for _, thread in self.runners.values():
                thread.join(timeout=15)
            for listener in self.listeners:
                close = getattr(listener, "close", None)
                if close is not None:
                    close()


def start_monitor(
    station: Station, stop: threading.Event, settings: MonitorSettings | None = None
) -> threading.Thread:
    """Start the audio monitor, with the SAME monitor and the archive listening, in a thread.

    The worker does this once it leads.
    """
    if settings is None:
        with station.engine.connect() as conn:
            settings = MonitorSettings(sample_rate=get_audio_settings(conn).sample_rate)
    listeners: list[AudioListener] = [
        SameMonitor(station, settings.sample_rate),
        ArchiveRecorder(station, settings.sample_rate, ffmpeg=settings.ffmpeg),
    ]
    monitor = AudioMonitor(station, stop, settings, listeners=listeners)
    thread = threading.Thread(target=monitor.run, name="audio-monitor", daemon=True)
    thread.start()
    return thread
