"""Structured logging: one JSON object per line, tagged with the current request id."""

from __future__ import annotations

import contextvars
import logging
import os
import queue
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any, TextIO

import orjson

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "alertstation_request_id", default=None
)

# How long the background writer waits after a line before writing, so that one write carries
# the lines of many requests and the writer wakes a few dozen times a second at most.
_GATHER_SECONDS = 0.02

ACCESS_LOGGER = "alertstation.access"

_STANDARD_ATTRS = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}

# This process's id, kept current by a fork hook: ``os.getpid()`` is a system call, and a queued
# line only needs to know whether it runs in the process that started the writer.
_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


class JsonFormatter(logging.Formatter):
    """Format records as JSON lines with time, level, logger, message, request id and extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": iso_millis(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    """Format records as readable lines for a terminal, extras as key=value."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = [
            f"{key}={value}"
            for key, value in vars(record).items()
            if key not in _STANDARD_ATTRS and not key.startswith("_")
        ]
        request_id = request_id_var.get()
        if request_id:
            extras.insert(0, f"request_id={request_id}")
        return f"{line} {' '.join(extras)}".rstrip()


def configure_logging(
    level: str = "INFO",
    fmt: str = "json",
    *,
    background: bool = False,
    stream: TextIO | None = None,
) -> None:
    """Send the station's logs to ``stream`` (stderr) in the chosen format (idempotent).

    ``background`` (the web server's choice) writes the lines from a background thread, so a
    request thread that logs never waits for stderr (:class:`BackgroundLineHandler`).
    """
    out = sys.stderr if stream is None else stream
    previous = logging.getLogger("alertstation").handlers[:]
    handler: logging.Handler
    handler = BackgroundLineHandler(out) if background else logging.StreamHandler(out)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("alertstation")
    # Handlers that watch the logs rather than write them (the recent-errors ring of the
    # diagnostics bundle) say so with ``keep_on_reconfigure`` and stay attached.
    kept = [h for h in previous if getattr(h, "keep_on_reconfigure", False)]
    root.handlers[:] = [handler, *kept]
    root.setLevel(level)
    root.propagate = False
    for replaced in previous:
        if isinstance(replaced, BackgroundLineHandler) and replaced not in kept:
            replaced.close()


class BackgroundLineHandler(logging.Handler):
    """Format each record on the logging thread, and write the lines from a background thread.

    The request id lives in a context variable, so a record is formatted where it is logged; only
    the finished line crosses the queue. The writer thread writes whatever lines are waiting in
    one call (gathering for 20 ms after the first) and flushes once, so a thread that logs never
    waits for the stream. ``flush`` waits until every line logged before it is written
    (``logging.shutdown`` calls it at exit), and a forked child starts its own writer on its first
    line.
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream
        self._queue: queue.SimpleQueue[str | threading.Event | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._writer_pid = 0
        self._start_lock = threading.Lock()

    def handle(self, record: logging.LogRecord) -> bool:  # type: ignore[override]
        # No handler lock: formatting runs in parallel and the queue is thread-safe.
        if not self.filter(record):
            return False
        self.emit(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.put_line(self.format(record))
        except Exception:
            self.handleError(record)

    def put_line(self, line: str) -> None:
        """Queue one finished line (without its newline) for the writer thread."""
        if self._writer_pid != _pid:
            self._start_writer()
        self._queue.put(line)

    def _start_writer(self) -> None:
        with self._start_lock:
            pid = _pid
            if self._writer_pid == pid:
                return
            if self._writer is not None:  # a forked child: the parent's queue and writer are gone
                self._queue = queue.SimpleQueue()
            self._writer = threading.Thread(
                target=self._write_lines, args=(self._queue,), name="log-writer", daemon=True
            )
            self._writer.start()
            self._writer_pid = pid

    def _write_lines(self, lines: queue.SimpleQueue[str | threading.Event | None]) -> None:
        while True:
            item = lines.get()
            if item is not None and not isinstance(item, threading.Event):
                time.sleep(_GATHER_SECONDS)  # let the lines of other requests join this write
            batch: list[str] = []
            done: list[threading.Event] = []
            stop = False
            while True:
                if item is None:
                    stop = True
                elif isinstance(item, threading.Event):
                    done.append(item)
                else:
                    batch.append(item)
                try:
                    item = lines.get_nowait()
                except queue.Empty:
                    break
            if batch:
                try:
                    self.stream.write("\n".join(batch) + "\n")
                    self.stream.flush()
                except Exception:  # a closed or broken stream: the lines are dropped
                    pass
            for event in done:
                event.set()
            if stop:
                return

    def flush(self) -> None:
        """Wait (up to 5 s) until every line queued before this call is written."""
        if self._writer is None or self._writer_pid != _pid or not self._writer.is_alive():
            return
        written = threading.Event()
        self._queue.put(written)
        written.wait(5.0)

    def close(self) -> None:
        """Write what is queued, then stop the writer thread."""
        self.flush()
        if self._writer is not None and self._writer_pid == _pid:
            self._queue.put(None)
            self._writer.join(5.0)
        self._writer = None
        self._writer_pid = 0
        super().close()


def access_line_writer(logger: logging.Logger, level: int) -> BackgroundLineHandler | None:
    """Return the handler an access line can go to directly, or None to log it normally.

    That is the case when ``logger`` (a child of the ``alertstation`` logger) has no handler or
    filter of its own and the station's only handler that takes ``level`` is the JSON background
    writer (a handler set above ``level``, such as the recent-errors ring at ERROR, would drop
    the record anyway).
    """
    if logger.handlers or logger.filters or not logger.propagate:
        return None
    parent = logger.parent
    if parent is None or parent.name != "alertstation" or parent.filters:
        return None
    found = None
    for handler in parent.handlers:
        if handler.level <= level:
            if found is not None:
                return None  # two handlers take the line
            found = handler
    if not isinstance(found, BackgroundLineHandler) or found.filters:
        return None
    if not isinstance(found.formatter, JsonFormatter):
        return None
    return found


def access_json_line(
    created: float, request_id: str | None, message: str, fields: dict[str, Any]
) -> str:
    """Return the line :class:`JsonFormatter` writes for an access record (logger
    ``alertstation.access``, level info, ``fields`` as its extras), without the record.

    The request id comes from the caller: the request's own, which the context variable holds
    while the line is logged.
    """
    entry: dict[str, Any] = {
        "time": iso_millis(created),
        "level": "info",
        "logger": ACCESS_LOGGER,
        "message": message,
    }
    if request_id:
        entry["request_id"] = request_id
    entry.update(fields)
    return orjson.dumps(entry, default=str).decode()


# The last second :func:`iso_millis` formatted, and its text up to the seconds (one per process;
# a race between threads only formats a second twice).
_second_text: tuple[int, str] = (-1, "")
_MILLIS_TEXT = tuple(f".{millis:03d}+00:00" for millis in range(1000))


def iso_millis(created: float) -> str:
    """Return ``datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")``.

    The text up to the seconds is formatted once per second, not once per line, and the
    milliseconds come from a table.
    """
    global _second_text
    second = int(created // 1)
    micros = round((created - second) * 1_000_000)  # half to even, as fromtimestamp rounds
    if micros >= 1_000_000:  # rounded up into the next second
        second, micros = second + 1, micros - 1_000_000
    cached_second, text = _second_text
    if cached_second != second:
        text = datetime.fromtimestamp(second, UTC).isoformat()[:19]
        _second_text = (second, text)
    return text + _MILLIS_TEXT[micros // 1000]
