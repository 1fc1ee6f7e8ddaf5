"""The request recorder: a middleware, a bounded in-process buffer and a background flusher.

``TrafficMiddleware.process_response`` (its tap: the compiled ``alertstation._native.traffic_tap``
when built, else its twin ``PyTap``) decides from the cached settings whether the request is
recorded (collection on, not internal, not a skipped path, API toggle, authenticated-only,
bots), masks the address when ``anonymize_ip`` is on, and appends what it saw to the recorder's
buffer as one plain tuple (the fields of ``Observed``, in order). That is all a request pays: no
database, no parsing, no object built, one clock reading for the settings (well under a
microsecond in all). The flusher thread takes the buffer about every second
(sooner once ``batch`` rows wait), turns the tuples into ``Observed``, enriches the rows (user
agent, language, GeoIP) and writes each batch as one multi-row INSERT.

Nothing here may fail or block a request: a full buffer drops the row and counts it. A batch
that meets a lock (another writer) is tried again with a growing pause for up to
``LOCK_RETRY_SECONDS`` before its rows are dropped. A batch that fails otherwise is written
again row by row, so only the rows that cannot be stored (logged) are dropped. Drops are added
to the ``rows_dropped`` counter in the database with the next write (``traffic.counters``), so
``dropped_rows`` gives the sum over every process, shown by ``/api/system_status``.
"""

from __future__ import annotations

import atexit
import logging
import operator
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from datetime import datetime
from types import ModuleType
from typing import Any, Final

import falcon
from falcon.util.misc import http_status_to_code
from falcon.util.uri import parse_host
from sqlalchemy import Connection, Engine

from alertstation.context import Station
from alertstation.db.bulk import BulkInsert
from alertstation.db.engine import begin_write, is_contention
from alertstation.db.types import epoch_seconds, utcnow
from alertstation.kernel_loader import load_kernel
from alertstation.security.geoip.lookup import locator_for
from alertstation.traffic import addresses, classify, counters, geoip_paths, rollups
from alertstation.traffic.agents import parse_agent
from alertstation.traffic.rows import ROW_COLUMNS, Locator, Observed, build_row
from alertstation.traffic.settings import (
    RecordRules,
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
LOCK_RETRY_SECONDS = 30.0  # a batch that meets a lock is tried again for this long ...
LOCK_PAUSE_FIRST = 0.05  # ... pausing this long at first, doubling ...
LOCK_PAUSE_MAX = 2.0  # ... up to this

_recorders: weakref.WeakSet[TrafficRecorder] = weakref.WeakSet()
_recorders_lock = threading.Lock()

_INSERT = BulkInsert(web_request_logs, (*ROW_COLUMNS, "import_key"))
_INSERT_VALUES = operator.itemgetter(*_INSERT.names)  # a row dict's values in column order


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
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
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
        self.monotonic = monotonic
        self.sleep = sleep
        self._unsaved_drops = 0  # dropped here, not yet added to the database's counter
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
            self.count_dropped()
            return
        pending.append(seen)
        if waiting + 1 == self.batch:
            self._wake.set()  # once, as the batch fills (the flusher then takes all there is)
        if not self._running:
            self._start()

    def count_dropped(self, rows: int = 1) -> None:
        """Count rows dropped (a full buffer, a failed write)."""
        with self._count_lock:
            self.dropped += rows
            self._unsaved_drops += rows

    def unsaved_drops(self) -> int:
        """Return the rows dropped here that the database's counter does not hold yet."""
        return self._unsaved_drops

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
            values = [_INSERT_VALUES(row) for row in rows]
        except Exception as ex:  # noqa: BLE001  (the flusher must outlive any failure)
            self.count_dropped(len(chunk))
            log.error("traffic rows not written (%s): %d dropped", type(ex).__name__, len(chunk))
            return 0
        try:
            self._store(values, min(row["hour"] for row in rows))
            written = len(rows)
        except Exception as ex:  # noqa: BLE001  (the flusher must outlive any failure)
            if is_contention(ex):
                self.count_dropped(len(rows))
                log.error(
                    "traffic rows not written: the database stayed locked for %.0f s; %d dropped",
                    LOCK_RETRY_SECONDS,
                    len(rows),
                )
                return 0
            written = self._row_by_row(values, rows)
        self.written += written
        if written and self._on_write is not None:
            self._on_write()
        return written

    def _row_by_row(self, values: list[tuple[Any, ...]], rows: list[dict[str, Any]]) -> int:
        """Write a batch that failed one row at a time; drop and count only the rows that fail."""
        written = 0
        for at, (value, row) in enumerate(zip(values, rows, strict=True)):
            try:
                self._store([value], row["hour"])
                written += 1
            except Exception as ex:  # noqa: BLE001  (the flusher must outlive any failure)
                if is_contention(ex):
                    self.count_dropped(len(rows) - at)
                    log.error("traffic rows not written (locked): %d dropped", len(rows) - at)
                    return written
                self.count_dropped()
                log.error(
                    "traffic row not written (%s): %s %s dropped",
                    type(ex).__name__,
                    row.get("method"),
                    repr(row.get("path"))[:200],
                )
        return written

    def _store(self, values: list[tuple[Any, ...]], first_hour: int) -> None:
        """Insert the rows in one transaction, with the drops not yet counted in the database;
        tried again with a growing pause while another writer holds a lock, for up to
        ``LOCK_RETRY_SECONDS`` (then the lock error is raised)."""
        started = self.monotonic()
        pause = LOCK_PAUSE_FIRST
        while True:
            try:
                with begin_write(self.engine) as conn:
                    _INSERT.run_one_statement(conn, values)  # one multi-row INSERT
                    # Rows of an hour already rolled up (flushed just after the hour turned).
                    rollups.invalidate_from(conn, first_hour)
                    saved = self._save_drops(conn)
                with self._count_lock:
                    self._unsaved_drops -= saved
                return
            except Exception as ex:
                if not is_contention(ex):
                    raise
                if self.monotonic() - started + pause > LOCK_RETRY_SECONDS:
                    raise
                self.sleep(pause)
                pause = min(pause * 2, LOCK_PAUSE_MAX)

    def _save_drops(self, conn: Connection) -> int:
        """Add the drops not yet counted to the database's counter; return how many."""
        unsaved = self._unsaved_drops
        counters.add(conn, counters.ROWS_DROPPED, unsaved)
        return unsaved

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

    The middleware queues the response's status as Falcon holds it (a code, a status line or
    an ``HTTPStatus``; ``resp.status_code`` is taken here) and the Host header as sent (or the
    server name without one): its port is taken off here, as ``req.host`` does, off the
    request's path.
    """
    if type(seen) is not tuple:
        return seen  # type: ignore[return-value]
    status = seen[3]
    if type(status) is not int:
        try:
            status = http_status_to_code(status)
        except ValueError:
            status = 500  # Falcon answers a status it cannot read with a 500

    host = seen[11]
    if host is not None:
        host = parse_host(host)[0]
    return Observed(*seen[:3], status, *seen[4:11], host)  # type: ignore[arg-type]


def _forked() -> None:
    """In a forked child: no recorder's flusher runs here yet (started on the next capture)."""
    for recorder in list(_recorders):
        recorder._running = False


os.register_at_fork(after_in_child=_forked)


def dropped_rows(conn: Connection | None) -> int:
    """Return how many request rows the recorders of every process dropped (a full buffer, a
    failed write): the database's counter, plus this process's drops not yet added to it
    (those alone without a connection)."""
    with _recorders_lock:
        unsaved = sum(recorder.unsaved_drops() for recorder in list(_recorders))
    return unsaved + (counters.read(conn, counters.ROWS_DROPPED) if conn is not None else 0)


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
    """Record every answered request into the recorder's buffer (never raises).

    Its ``process_response`` is the tap's (``Tap``: the compiled ``alertstation._native.
    traffic_tap`` when built, else ``PyTap``), which Falcon calls directly.
    """

    def __init__(self, recorder: TrafficRecorder) -> None:
        self.recorder = recorder
        now = epoch_seconds(recorder.clock)
        self.tap = Tap(
            recorder.settings,
            recorder.settings.monotonic,
            now,
            recorder,
            recorder._pending,
            _internal,
            _is_internal,
            _is_bot,
            _masked,
            _body_length,
            time.perf_counter,
            _not_recorded,
            falcon.Request,
            falcon.Response,
        )
        self.process_response = self.tap.process_response  # type: ignore[method-assign]

    @classmethod
    def for_station(cls, station: Station) -> TrafficMiddleware:
        """Return the middleware of ``station``: its engine, clock and GeoIP databases (where
        the traffic settings say they are: ``geoip_paths.attach``)."""
        data_dir = station.settings.data_dir
        geoip_paths.attach(station.engine, data_dir, station.clock)
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
        """Falcon's response hook (each instance answers with its tap's)."""
        self.tap.process_response(req, resp, resource, req_succeeded)


class PyTap:
    """The request side of recording: decide from the settings, queue the request's fields.

    The pure-Python twin of ``alertstation._native.traffic_tap.Tap`` (same arguments, same
    rules in the same order, same fields queued; a test holds them equal). ``should_record``'s
    rules run inline with no further Python call on the common path: the settings from the
    cache's ``state`` (a clock reading), the rules as one tuple
    (``TrafficSettings.record_rules``), the fields straight from the WSGI environ and the
    request context, and the recorder's buffer appended to in place (what
    ``TrafficRecorder.capture`` does). The status is queued as Falcon holds it; the flusher
    turns it into a code. The rare paths are the callbacks: ``is_internal`` (an address not
    in the ``internal`` dict yet), ``is_bot``, ``mask``, ``body_length`` (a body that is not
    plain bytes), and ``on_error`` for anything raised. The buffer's capacity and batch are
    the recorder's when the tap is built.
    """

    def __init__(
        self,
        cache: TrafficSettingsCache,
        monotonic: Callable[[], float],
        now: Callable[[], float],
        recorder: TrafficRecorder,
        pending: deque[Any],
        internal: dict[str, bool],
        is_internal: Callable[[str], bool],
        is_bot: Callable[[str], bool],
        mask: Callable[[str], str],
        body_length: Callable[[falcon.Response], int | None],
        perf_counter: Callable[[], float],
        on_error: Callable[[Exception], None],
        plain_request: type | None = None,
        plain_response: type | None = None,
    ) -> None:
        self.cache = cache
        self.monotonic = monotonic
        self.now = now
        self.recorder = recorder
        self.pending = pending
        self.valid_until = float("-inf")  # asks the cache on the first request
        self.rules: RecordRules | None = None
        # The buffer's bounds as the recorder had them when the tap was built.
        self.capacity = recorder.capacity
        self.batch = recorder.batch
        # Falcon's own Request and Response: the compiled tap reads their slots directly.
        self.plain_request = plain_request
        self.plain_response = plain_response
        self.internal = internal
        self.is_internal = is_internal
        self.is_bot = is_bot
        self.mask = mask
        self.body_length = body_length
        self.perf_counter = perf_counter
        self.on_error = on_error
        cache.follow(self)

    def follow(self, state: tuple[float, TrafficSettings, RecordRules | None]) -> None:
        """Take the settings cache's ``state`` (the cache hands each new one to its taps)."""
        self.valid_until, _, self.rules = state

    def process_response(  # noqa: C901  (should_record's rules inline: one call per request)
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        """Falcon's response hook: queue the request's fields when the settings record it."""
        try:
            if self.monotonic() >= self.valid_until:
                self.cache.get()  # hands its state to this tap
                self.follow(self.cache.state)
            rules = self.rules
            if rules is None:
                return  # collection off
            # should_record's rules, in its order, without the call.
            authenticated_only, log_api, skip_paths, exclude_internal, exclude_bots, mask = rules
            # The request context's attributes, read with a default (a missing one raises
            # nothing, and the context's attribute dict is not built).
            context = req.context
            signed_in = getattr(context, "user", None) is not None
            if authenticated_only and not signed_in:
                return
            path = req.path
            if not log_api and (path.startswith(_API_PREFIX) or path == _API_ROOT):
                return  # classify.is_api(path)
            if skip_paths and path.startswith(skip_paths):
                return
            env = req.env  # headers as ``req.get_header`` reads them, straight from the environ
            # req.remote_addr, which is 127.0.0.1 without REMOTE_ADDR
            client_ip = context.get("client_ip") or env.get("REMOTE_ADDR", "127.0.0.1") or "0.0.0.0"
            if exclude_internal:
                internal = self.internal.get(client_ip)
                if internal is None:
                    internal = self.is_internal(client_ip)
                if internal:
                    return
            user_agent = env.get("HTTP_USER_AGENT")
            if exclude_bots and user_agent and self.is_bot(user_agent):
                return
            if mask:
                client_ip = self.mask(client_ip)
            started = getattr(context, "started", None)
            # The body's size, as render_body() would give it (text, else data, else media).
            if resp.stream is None and resp.text is None:
                data = resp.data
                length = len(data) if data is not None else self.body_length(resp)
            else:
                length = self.body_length(resp)
            # TrafficRecorder.capture, inline.
            recorder = self.recorder
            pending = self.pending
            waiting = len(pending)
            if waiting >= self.capacity:
                recorder.count_dropped()
                return
            # The fields of ``Observed``, in order (the status as Falcon holds it, the Host
            # header as sent): the flusher builds the ``Observed``.
            pending.append(
                (
                    self.now(),
                    req.method,
                    path,
                    resp.status,
                    (self.perf_counter() - started) * 1000 if started else None,
                    length,
                    client_ip,
                    user_agent,
                    env.get("HTTP_REFERER"),
                    env.get("HTTP_ACCEPT_LANGUAGE"),
                    signed_in,
                    env.get("HTTP_HOST") or env.get("SERVER_NAME"),
                )
            )
            if waiting + 1 == self.batch:
                recorder._wake.set()
            # Is the flusher running here (a forked child starts its own)? Asked every 64 rows.
            if waiting & 63 == 0 and not recorder._running:
                recorder._start()
        except Exception as ex:  # noqa: BLE001  (recording must never fail a request)
            self.on_error(ex)


_native: ModuleType | None = load_kernel("traffic_tap")
HAS_NATIVE: Final[bool] = _native is not None
Tap: Any = _native.Tap if _native is not None else PyTap


def _is_bot(user_agent: str) -> bool:
    """Whether the user agent parser calls ``user_agent`` a bot (``exclude_bots``)."""
    return parse_agent(user_agent).is_bot


def _not_recorded(ex: Exception) -> None:
    log.error("request not recorded (%s)", type(ex).__name__)


def _masked(client_ip: str) -> str:
    """The address as ``anonymize_ip`` stores it (0.0.0.0 when it is no address)."""
    try:
        return addresses.mask_address(client_ip)
    except ValueError:
        return "0.0.0.0"


def _body_length(resp: falcon.Response) -> int | None:
    """Return the response body's size in bytes (rendering media once; Falcon keeps it)."""
    if resp.stream is not None:
        length = resp.content_length
        return int(length) if length is not None else None
    text = resp.text
    if text is not None:
        return len(text) if text.isascii() else len(text.encode())
    data = resp.data
    if data is not None:
        return len(data)
    try:
        body = resp.render_body()
    except Exception:  # noqa: BLE001  (Falcon reports a bad body itself)
        return None
    return len(body) if body is not None else 0
