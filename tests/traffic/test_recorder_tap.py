"""The recorder's request side: the compiled tap equals its Python twin; the settings it follows."""

from __future__ import annotations

import http
import io
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import falcon
import falcon.testing
import pytest
from sqlalchemy import Engine, select

from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.traffic import recorder as recorder_module
from alertstation.traffic.recorder import PyTap, TrafficRecorder
from alertstation.traffic.settings import TrafficSettings, TrafficSettingsCache, save_settings
from alertstation.traffic.tables import web_request_logs
from tests.support import clear_tables

CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36"
)
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
BROWSER = {"User-Agent": CHROME, "Referer": "https://example.net/a", "Accept-Language": "de"}


class FixedSettings:
    """A settings cache that always answers ``settings`` (what the taps read of one)."""

    def __init__(self, settings: TrafficSettings) -> None:
        self.state = (float("inf"), settings, settings.record_rules)

    def get(self) -> TrafficSettings:
        return self.state[1]

    def follow(self, tap: Any) -> None:
        tap.follow(self.state)


class Buffer:
    """What a tap needs of a recorder: the bounds, the wake-up, the flusher flag, the count."""

    def __init__(self, capacity: int = 100, batch: int = 3) -> None:
        self.capacity = capacity
        self.batch = batch
        self.dropped = 0
        self.started = 0
        self._running = False
        self._wake = threading.Event()
        self._pending: deque[Any] = deque()

    def _start(self) -> None:
        self.started += 1
        self._running = True

    def count_dropped(self, rows: int = 1) -> None:
        self.dropped += rows


def make_tap(kind: Any, settings: TrafficSettings, buffer: Buffer, errors: list[str]) -> Any:
    return kind(
        FixedSettings(settings),
        time.monotonic,
        time.time,
        buffer,
        buffer._pending,
        {},
        recorder_module.addresses.is_internal,
        recorder_module._is_bot,
        recorder_module._masked,
        recorder_module._body_length,
        time.perf_counter,
        lambda ex: errors.append(type(ex).__name__),
        falcon.Request,
        falcon.Response,
    )


class OtherResponse(falcon.Response):
    """A Response subclass: the compiled tap reads it through its attributes."""


def exchange(case: str) -> tuple[falcon.Request, falcon.Response]:
    """One request and its response, as a case names them."""
    path = {"api": "/api/things", "api_root": "/api", "skipped": "/healthz/deep"}.get(case, "/page")
    headers = {"User-Agent": GOOGLEBOT} if case == "bot" else dict(BROWSER)
    if case == "host":
        headers["Host"] = "station.example:8443"
    remote = {"loopback": "127.0.0.1", "v6": "2001:db8:1:2::10", "junk": "not-an-address"}
    env = falcon.testing.create_environ(
        path=path,
        method="POST" if case == "post" else "GET",
        headers=headers,
        remote_addr=remote.get(case, "198.51.100.9"),
    )
    if case == "no_remote":
        del env["REMOTE_ADDR"]
    if case == "no_headers":
        for name in ("HTTP_USER_AGENT", "HTTP_REFERER", "HTTP_ACCEPT_LANGUAGE", "HTTP_HOST"):
            env.pop(name, None)
    req = falcon.Request(env)
    if case in ("signed_in", "proxied"):
        req.context.user = SimpleNamespace(name="boss")
        req.context.client_ip = "192.0.2.77"
        req.context.started = time.perf_counter()
    resp = OtherResponse() if case == "subclass" else falcon.Response()
    if case == "text":
        resp.text = "Grüße from the station"
    elif case == "media":
        resp.media = {"alerts": [1, 2, 3]}
    elif case == "stream":
        resp.set_stream(io.BytesIO(b"12345"), 5)
    elif case == "empty":
        pass
    else:
        resp.data = b"<html>page</html>"
    if case == "status_line":
        resp.status = "404 Not Found"
    elif case == "enum":
        resp.status = http.HTTPStatus.CREATED
    return req, resp


CASES = (
    "plain post api api_root skipped bot host loopback v6 junk no_remote no_headers signed_in "
    "proxied subclass text media stream empty status_line enum"
).split()
SETTINGS = {
    "defaults": TrafficSettings(),
    "everything": TrafficSettings(log_api_requests=True, exclude_internal=False),
    "strict": TrafficSettings(
        authenticated_only=True, exclude_bots=True, skip_paths=("/healthz",), anonymize_ip=True
    ),
    "masked": TrafficSettings(anonymize_ip=True, exclude_internal=False, exclude_bots=True),
    "list_skip": TrafficSettings(skip_paths=["/healthz", "/x"]),  # type: ignore[arg-type]
    "off": TrafficSettings(enabled=False),
}


def queued(kind: Any, settings: TrafficSettings, case: str) -> tuple[list[Any], Buffer, list[str]]:
    buffer, errors = Buffer(), []
    tap = make_tap(kind, settings, buffer, errors)
    req, resp = exchange(case)
    tap.process_response(req, resp, None, True)
    rows = [list(row) for row in buffer._pending]
    for row in rows:  # the clocks: each a number, read when the tap ran
        assert abs(row[0] - time.time()) < 60
        assert row[4] is None or 0 <= row[4] < 60_000
        row[0], row[4] = "ts", row[4] is not None
    return rows, buffer, errors


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_the_compiled_tap_queues_what_the_python_tap_queues(name: str) -> None:
    native = pytest.importorskip("alertstation._native.traffic_tap")
    settings = SETTINGS[name]
    recorded = 0
    for case in CASES:
        ours, ours_buffer, ours_errors = queued(native.Tap, settings, case)
        twin, twin_buffer, twin_errors = queued(PyTap, settings, case)
        assert ours == twin, case
        assert ours_errors == twin_errors == [], case
        assert ours_buffer.started == twin_buffer.started == len(ours), case
        recorded += len(ours)
    # Each settings' rules left out what they should: all, nothing, or some.
    if name == "off":
        assert recorded == 0
    elif name == "everything":
        assert recorded == len(CASES)
    else:
        assert 0 < recorded < len(CASES)


def test_both_taps_apply_the_rules_of_should_record() -> None:
    # The rules come out as should_record says (its inputs: path, client, signed in).
    for kind in (PyTap, recorder_module.Tap):
        for name, settings in SETTINGS.items():
            for case in CASES:
                rows, _, _ = queued(kind, settings, case)
                req, _ = exchange(case)
                client = getattr(req.context, "client_ip", None) or req.remote_addr
                signed_in = getattr(req.context, "user", None) is not None
                expected = recorder_module.should_record(settings, req.path, client, signed_in)
                if expected and settings.exclude_bots:
                    expected = case != "bot"
                assert bool(rows) == expected, (kind, name, case)


def test_both_taps_queue_the_fields_of_the_request() -> None:
    settings = replace(SETTINGS["everything"], anonymize_ip=True)
    for kind in (PyTap, recorder_module.Tap):
        [row], _, _ = queued(kind, settings, "proxied")
        assert row[1:4] == ["GET", "/page", falcon.Response().status]  # as Falcon holds it
        assert row[4] is True  # response_ms, from the context's start
        assert row[5] == len(b"<html>page</html>")
        assert row[6] == "192.0.2.0"  # the context's client address, masked
        assert row[7:11] == [CHROME, "https://example.net/a", "de", True]
        [row], _, _ = queued(kind, settings, "text")
        assert row[5] == len("Grüße from the station".encode())
        [row], _, _ = queued(kind, settings, "media")
        assert row[5] == len(b'{"alerts": [1, 2, 3]}')
        [row], _, _ = queued(kind, settings, "stream")
        assert row[5] == 5
        [row], _, _ = queued(kind, settings, "status_line")
        assert row[3] == "404 Not Found"  # as Falcon holds it; the flusher takes the code
        [row], _, _ = queued(kind, settings, "no_remote")
        assert row[6] == "127.0.0.0"  # req.remote_addr's 127.0.0.1, masked


def test_a_full_buffer_drops_and_counts_and_a_full_batch_wakes_the_flusher() -> None:
    for kind in (PyTap, recorder_module.Tap):
        buffer, errors = Buffer(capacity=4, batch=3), []
        tap = make_tap(kind, TrafficSettings(exclude_internal=False), buffer, errors)
        woken = []
        for _ in range(6):
            req, resp = exchange("plain")
            tap.process_response(req, resp, None, True)
            woken.append(buffer._wake.is_set())
            buffer._wake.clear()
        assert len(buffer._pending) == 4 and buffer.dropped == 2 and errors == []
        assert woken == [False, False, True, False, False, False]  # once, as the batch filled
        assert buffer.started == 1


def test_a_tap_that_fails_reports_it_and_queues_nothing() -> None:
    for kind in (PyTap, recorder_module.Tap):
        buffer, errors = Buffer(), []
        tap = make_tap(kind, TrafficSettings(exclude_internal=False), buffer, errors)
        req, resp = exchange("plain")
        req.env = None  # type: ignore[assignment]  (not a request any more)
        tap.process_response(req, resp, None, True)
        assert len(errors) == 1 and not buffer._pending


@pytest.fixture
def stored(engine: Engine) -> Iterator[Engine]:
    """The test database, every table emptied afterwards (settings and generations too)."""
    yield engine
    clear_tables(engine)


def test_a_save_elsewhere_is_seen_within_the_check_interval(stored: Engine) -> None:
    now = [1000.0]
    cache = TrafficSettingsCache(stored, monotonic=lambda: now[0])
    assert cache.get().enabled and cache.state[2] is not None
    with begin_write(stored) as conn:  # another process: this cache is not cleared
        save_settings(conn, {"enabled": False}, recorder_module.utcnow())
    now[0] += 0.5
    assert cache.get().enabled  # checked half a second ago: not asked again yet
    buffer, errors = Buffer(), []
    for kind in (PyTap, recorder_module.Tap):
        tap = kind(
            cache,
            cache.monotonic,
            time.time,
            buffer,
            buffer._pending,
            {},
            recorder_module._is_internal,
            recorder_module._is_bot,
            recorder_module._masked,
            recorder_module._body_length,
            time.perf_counter,
            lambda ex: errors.append(type(ex).__name__),
            falcon.Request,
            falcon.Response,
        )
        tap.process_response(*exchange("plain"), None, True)
    assert len(buffer._pending) == 2
    now[0] += 0.5
    assert not cache.get().enabled  # a second after the last check: the save is seen
    assert cache.state == (now[0] + 1.0, cache.get(), None)
    tap.process_response(*exchange("plain"), None, True)
    assert len(buffer._pending) == 2 and errors == []
    cache.clear()  # a save in this process: seen at once
    with begin_write(stored) as conn:
        save_settings(conn, {"enabled": True}, recorder_module.utcnow())
    cache.clear()
    assert cache.get().enabled


def test_with_the_database_down_the_last_settings_hold_and_it_is_asked_once_a_second(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bare = make_engine(f"sqlite:///{tmp_path / 'no-tables.db'}")  # no generations table
    now = [50.0]
    cache = TrafficSettingsCache(bare, monotonic=lambda: now[0])
    with caplog.at_level(logging.ERROR, logger="alertstation.traffic"):
        assert cache.get() == TrafficSettings()
        now[0] += 0.9
        assert cache.get() == TrafficSettings()
        assert len(caplog.records) == 1  # asked once within the second
        now[0] += 0.2
        cache.get()
        assert len(caplog.records) == 2
    bare.dispose()


def test_the_flusher_turns_a_queued_status_into_its_code(stored: Engine) -> None:
    recorder = TrafficRecorder(stored, TrafficSettingsCache(stored))
    fields = [1_800_000_000.0, "GET", "/p", 200, None, 1, "203.0.113.4", None, None, None, False]
    for status in ("404 Not Found", http.HTTPStatus.CREATED, 503, "no status"):
        fields[3] = status
        recorder.capture((*fields, "station.example:8443"))
    assert recorder.flush() == 4 and recorder.dropped == 0
    with stored.connect() as conn:
        statuses = conn.execute(select(web_request_logs.c.status).order_by("id")).scalars()
        assert list(statuses) == [404, 201, 503, 500]  # Falcon answers an unreadable one with 500
