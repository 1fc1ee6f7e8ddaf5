"""The request recorder: a middleware, a bounded in-process buffer and a background flusher.

``TrafficMiddleware.process_response`` decides from the cached settings whether the request is
recorded (collection on, not internal, not a skipped path, API toggle, authenticated-only,
bots), masks the address when ``anonymize_ip`` is on, and appends what it saw to the recorder's
buffer as one plain tuple (the fields of ``Observed``, in order). That is all a request pays: no
database, no parsing, no object built. The flusher thread takes the buffer about every second
(sooner once ``batch`` rows wait), turns the tuples into ``Observed``, enriches the rows (user
agent, language, GeoIP) and writes each batch as one multi-row INSERT.

Nothing here may fail or block a request: a full buffer drops the row and counts it
(``dropped_rows()``, shown on ``/status``); a failed write is logged, its rows counted as dropped
too, and the flusher carries on.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Any

import falcon
from falcon.util.uri import parse_host
from sqlalchemy import Engine

from alertstation.context import Station
from alertstation.db.bulk import BulkInsert
from alertstation.db.engine import begin_write
from alertstation.db.types import utcnow
from alertstation.security.geoip.lookup import locator_for
from alertstation.traffic import addresses, classify, rollups
from alertstation.traffic.agents import parse_agent
from alertstation.traffic.rows import ROW_COLUMNS, Locator, Observed, build_row
from alertstation.traffic.settings import (
    TrafficSettings,
    TrafficSettingsCache,
    settings_cache_for,
)
from alertstation.traffic.tables import web_request_logs

log = logging.getLogger("alertstation.traffic")

CAPACITY = 10_000
_API_PREFIX = classify.API_PREFIX
_API_ROOT = classify.API_PREFIX[:-1]
BATCH = 500
MAX_BATCH = 32_766 // (len(ROW_COLUMNS) + 1)
INTERVAL = 1.0

_recorders: weakref.WeakSet[TrafficRecorder] = weakref.WeakSet()
_recorders_lock = threading.Lock()

_INSERT = BulkInsert(web_request_logs, (*ROW_COLUMNS, "import_key"))


class TrafficRecorder:
    """Buffer observed requests and write them in batches from one background thread."""

    def __init__(
        self,
        engine: Engine,
        settings: TrafficSettingsCache,
        locator: Callable[[], Locator | None] = lambda: None,
        *,
        capacity: int = CAPACITY,
        batch: int = BATCH,
        interval: float = INTERVAL,
        on_write: Callable[[], None] | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.capacity = capacity
        # One multi-row INSERT per batch: within SQLite's 32,766 parameters.
        self.batch = max(1, min(batch, MAX_BATCH))
        self.interval = interval
        self.dropped = 0
        self.written = 0
        self.clock = clock
        self._locator = locator
        self._on_write = on_write
        self._pending: deque[Observed | tuple[Any, ...]] = deque()
        self._count_lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._thread_pid = 0
        # True while this process's flusher runs; a fork clears it in the child (its parent's
        # thread is not there), so a request asks a flag, not the process id.
        self._running = False
        with _recorders_lock:
            _recorders.add(self)

    # --- the request side ---------------------------------------------------------------

    def capture(self, seen: Observed | tuple[Any, ...]) -> None:
        """Queue one observation; when the buffer is full, drop it and count it.

        ``seen`` is an ``Observed``, or the tuple of its fields in order (what the middleware
        queues: the flusher builds the ``Observed``).
        """
        pending = self._pending
        waiting = len(pending)
        if waiting >= self.capacity:
            with self._count_lock:
                self.dropped += 1
            return
        pending.append(seen)
        if waiting + 1 >= self.batch:
            self._wake.set()
        if not self._running:
            self._start()

    def pending(self) -> int:
        """Return how many observations wait for the flusher."""
        return len(self._pending)

    # --- the flusher side ---------------------------------------------------------------

    def _start(self) -> None:
        with self._count_lock:
            if self._thread_pid == os.getpid():
                return
            self._thread_pid = os.getpid()  # after a fork the parent's thread is gone: start anew
            self._running = True
            thread = threading.Thread(
                target=_flush_loop, args=(weakref.ref(self),), name="traffic-flusher", daemon=True
            )
            self._thread = thread
        thread.start()

    def flush(self) -> int:
        """Write everything buffered now, in batches; return the number of rows written."""
        written = 0
        with self._flush_lock:
            while self._pending:
                chunk = [
                    self._pending.popleft() for _ in range(min(self.batch, len(self._pending)))
                ]
                written += self._write(chunk)
        return written

    def _write(self, chunk: list[Observed | tuple[Any, ...]]) -> int:
        try:
            locator = self._locator()
            if locator is not None:
                locator = _BatchLocator(locator)
            rows = [build_row(_observed(seen), locator) for seen in chunk]
            values = [tuple(row[name] for name in _INSERT.names) for row in rows]
            with begin_write(self.engine) as conn:
                _INSERT.run_one_statement(conn, values)  # one multi-row INSERT
                # Rows of an hour already rolled up (flushed just after the hour turned).
                rollups.invalidate_from(conn, min(row["hour"] for row in rows))
        except Exception as ex:  # noqa: BLE001  (the flusher must outlive any failure)
            with self._count_lock:
                self.dropped += len(chunk)
            log.error("traffic rows not written (%s): %d dropped", type(ex).__name__, len(chunk))
            return 0
        self.written += len(rows)
        if self._on_write is not None:
            self._on_write()
        return len(rows)

    def wait(self, timeout: float) -> None:
        """Sleep until woken by a full batch or ``timeout`` seconds pass."""
        self._wake.wait(timeout)
        self._wake.clear()


def _flush_loop(ref: weakref.ref[TrafficRecorder]) -> None:
    """Flush the recorder about every interval until it is garbage-collected."""
    while True:
        recorder = ref()
        if recorder is None:
            return
        interval = recorder.interval
        wake = recorder._wake
        del recorder  # hold no reference while sleeping: a dropped app frees its recorder
        wake.wait(interval)
        wake.clear()
        recorder = ref()
        if recorder is None:
            return
        recorder.flush()
        del recorder


class _BatchLocator:
    """The GeoIP locator for one batch: each address is looked up once (visitors repeat).

    A new one per batch, so a database uploaded meanwhile is used from the next batch on.
    """

    def __init__(self, locator: Locator) -> None:
        self._locator = locator
        self._places: dict[str, Any] = {}
        self._networks: dict[str, Any] = {}

    def locate(self, address: str) -> Any:
        try:
            return self._places[address]
        except KeyError:
            found = self._places[address] = self._locator.locate(address)
            return found

    def asn(self, address: str) -> Any:
        try:
            return self._networks[address]
        except KeyError:
            found = self._networks[address] = self._locator.asn(address)
            return found


def _observed(seen: Observed | tuple[Any, ...]) -> Observed:
    """Return the ``Observed`` of a queued observation (a tuple of its fields, or itself).

    The middleware queues the Host header as sent (or the server name without one): its port
    is taken off here, as ``req.host`` does, off the request's path.
    """
    if type(seen) is not tuple:
        return seen  # type: ignore[return-value]
    host = seen[11]
    if host is not None:
        host = parse_host(host)[0]
    return Observed(*seen[:11], host)  # type: ignore[arg-type]


def _forked() -> None:
    """In a forked child: no recorder's flusher runs here yet (started on the next capture)."""
    for recorder in list(_recorders):
        recorder._running = False


os.register_at_fork(after_in_child=_forked)


def dropped_rows() -> int:
    """Return how many request rows this process dropped (buffer overflow or failed writes)."""
    with _recorders_lock:
        return sum(recorder.dropped for recorder in list(_recorders))


def flush_all() -> int:
    """Write every recorder's buffer now (at exit, and in tests); return the rows written."""
    with _recorders_lock:
        recorders = list(_recorders)
    return sum(recorder.flush() for recorder in recorders)


atexit.register(flush_all)


# --- the middleware -------------------------------------------------------------------------


def should_record(settings: TrafficSettings, path: str, client_ip: str, signed_in: bool) -> bool:
    """Apply the collection settings that need only the request line and the caller.

    The cheap tests come first; whether the address is internal (a parse) is asked last.
    """
    if not settings.enabled:
        return False
    if settings.authenticated_only and not signed_in:
        return False
    if not path_recorded(settings, path):
        return False
    return not (settings.exclude_internal and _is_internal(client_ip))


def path_recorded(settings: TrafficSettings, path: str) -> bool:
    """Apply the path rules alone: API calls (``log_api_requests``) and ``skip_paths``."""
    if not settings.log_api_requests and classify.is_api(path):
        return False
    skip_paths = settings.skip_paths
    return not (
        skip_paths
        and path.startswith(skip_paths if isinstance(skip_paths, tuple) else tuple(skip_paths))
    )


_INTERNAL_CACHE_SIZE = 4096
_internal: dict[str, bool] = {}


def _is_internal(client_ip: str) -> bool:
    """``addresses.is_internal``, remembered per address (client addresses repeat).

    A plain dict, emptied when full (a busy station sees a few thousand addresses at once).
    """
    known = _internal.get(client_ip)
    if known is None:
        known = addresses.is_internal(client_ip)
        if len(_internal) >= _INTERNAL_CACHE_SIZE:
            _internal.clear()
        _internal[client_ip] = known
    return known


class TrafficMiddleware:
    """Record every answered request into the recorder's buffer (never raises)."""

    def __init__(self, recorder: TrafficRecorder) -> None:
        self.recorder = recorder
        self._settings = recorder.settings.get
        clock = recorder.clock
        # Seconds since the epoch from the recorder's clock (the plain system clock is quicker).
        self._now: Callable[[], float] = (
            time.time if clock is utcnow else lambda: clock().timestamp()
        )

    @classmethod
    def for_station(cls, station: Station) -> TrafficMiddleware:
        """Return the middleware of ``station``: its engine, clock and GeoIP databases."""
        data_dir = station.settings.data_dir
        recorder = TrafficRecorder(
            station.engine,
            settings_cache_for(station.engine),
            lambda: locator_for(data_dir),
            clock=station.clock,
        )
        return cls(recorder)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        try:
            settings = self._settings()
            if settings.enabled:
                self._record(req, resp, settings)
        except Exception as ex:  # noqa: BLE001  (recording must never fail a request)
            log.error("request not recorded (%s)", type(ex).__name__)

    def _record(
        self, req: falcon.Request, resp: falcon.Response, settings: TrafficSettings
    ) -> None:
        # should_record's rules, in its order, without the call.
        # The request context's attributes as a dict: a missing one costs no AttributeError.
        context = vars(req.context)
        env = req.env  # headers as ``req.get_header`` reads them, straight from the environ
        signed_in = context.get("user") is not None
        if settings.authenticated_only and not signed_in:
            return
        path = req.path
        if not settings.log_api_requests and (path.startswith(_API_PREFIX) or path == _API_ROOT):
            return  # classify.is_api(path)
        skip_paths = settings.skip_paths
        if skip_paths and path.startswith(
            skip_paths if isinstance(skip_paths, tuple) else tuple(skip_paths)
        ):
            return
        # req.remote_addr, which is 127.0.0.1 without REMOTE_ADDR
        client_ip = context.get("client_ip") or env.get("REMOTE_ADDR", "127.0.0.1") or "0.0.0.0"
        if settings.exclude_internal and _is_internal(client_ip):
            return
        user_agent = env.get("HTTP_USER_AGENT")
        if settings.exclude_bots and user_agent and parse_agent(user_agent).is_bot:
            return
        if settings.anonymize_ip:
            try:
                client_ip = addresses.mask_address(client_ip)
            except ValueError:
                client_ip = "0.0.0.0"
        started = context.get("started")
        # The fields of ``Observed``, in order (the Host header as sent): the flusher builds it.
        self.recorder.capture(
            (
                self._now(),
                req.method,
                path,
                resp.status_code,
                (time.perf_counter() - started) * 1000 if started else None,
                _body_length(resp),
                client_ip,
                user_agent,
                env.get("HTTP_REFERER"),
                env.get("HTTP_ACCEPT_LANGUAGE"),
                signed_in,
                env.get("HTTP_HOST") or env.get("SERVER_NAME"),
            )
        )


def _body_length(resp: falcon.Response) -> int | None:
    """Return the response body's size in bytes (rendering media once; Falcon keeps it)."""
    if resp.stream is not None:
        length = resp.content_length
        return int(length) if length is not None else None
    try:
        body = resp.render_body()
    except Exception:  # noqa: BLE001  (Falcon reports a bad body itself)
        return None
    return len(body) if body is not None else 0
