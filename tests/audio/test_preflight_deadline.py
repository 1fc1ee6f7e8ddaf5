"""A stream preflight ends by its deadline however the upstream trickles, a few at a time.

The upstreams are real loopback servers that send one byte every 0.1 s and never finish; the
station under test runs with a short preflight deadline so that the tests stay fast. No test
asserts a time: each asserts that an answer came.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import falcon.testing
import pytest
from sqlalchemy import Engine

from alertstation.app import create_app
from alertstation.audio.preflight import preflight
from alertstation.audio.sources import SourceConfig
from alertstation.auth.sessions import COOKIE_NAME
from alertstation.http.outbound import OutboundClient
from tests.alerts.feed_server import Canned, FeedServer
from tests.audio.slow_upstream import MODES, slow_upstream
from tests.support import Clock, StationHarness, clear_tables, make_settings

#: Generous: an answer that has not come by then never will.
GIVE_UP = 120.0
SHORT_DEADLINE = 1.0
SOURCES = "/api/audio/sources"


def run_all(calls: list[Any]) -> list[Any]:
    """Run the calls in threads at once; return their results (None for one still running)."""
    results: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        results[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=GIVE_UP)
    return results


def test_each_preflight_ends_by_its_deadline_however_the_upstream_trickles() -> None:
    client = OutboundClient()
    with slow_upstream() as upstream:
        configs = [SourceConfig(name="slow", kind="stream", url=upstream.url(m)) for m in MODES]
        results = run_all(
            [lambda c=c: preflight(client, c, seconds=SHORT_DEADLINE) for c in configs]
        )
    for mode, result in zip(MODES, results, strict=True):
        assert result is not None, f"the preflight of {mode} never ended"
        assert result.ok is False, mode
        assert "deadline" in result.message, (mode, result.message)


def test_a_self_referencing_playlist_is_refused(stream_server: FeedServer) -> None:
    url = stream_server.url("/self.m3u")
    stream_server.serve(
        "/self.m3u", Canned(f"#EXTM3U\n{url}\n".encode(), content_type="audio/x-mpegurl")
    )
    config = SourceConfig(name="loop", kind="stream", url=url)
    result = preflight(OutboundClient(), config, seconds=30)
    assert result.ok is False
    assert "only itself" in result.message


# --- the web tier keeps answering -------------------------------------------------------------


class PooledServer(ThreadingMixIn, WSGIServer):
    """A WSGI server with a fixed pool of request threads, as gunicorn's gthread worker has."""

    def __init__(self, *args: Any, threads: int, **kwargs: Any) -> None:
        self.pool = ThreadPoolExecutor(max_workers=threads)
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.pool.submit(self.process_request_thread, request, client_address)


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path, engine: Engine) -> Iterator[tuple[StationHarness, str]]:
    """The real app behind a real loopback server with 8 request threads, short deadline."""
    clock = Clock()
    settings = make_settings(
        tmp_path,
        engine.url.render_as_string(hide_password=False),
        preflight_concurrency=2,
        preflight_seconds=SHORT_DEADLINE,
    )
    app = create_app(settings, engine=engine, clock=clock)
    server = make_server(
        "127.0.0.1",
        0,
        app,
        server_class=lambda *a, **k: PooledServer(*a, threads=8, **k),
        handler_class=QuietHandler,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        harness = StationHarness(app, falcon.testing.TestClient(app), clock, engine)
        yield harness, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        server.pool.shutdown(wait=False, cancel_futures=True)
        clear_tables(engine)


def call(base: str, method: str, path: str, body: Any = None, headers: Any = None) -> int:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=GIVE_UP) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as ex:
        return int(ex.code)


def test_eight_slow_upstreams_never_stop_the_public_state_answering(
    served: tuple[StationHarness, str],
) -> None:
    station, base = served
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    signed = {"Cookie": f"{COOKIE_NAME}={ops.cookie}", "X-CSRF-Token": ops.csrf}
    with slow_upstream() as upstream:
        urls = [upstream.url(MODES[i % len(MODES)]) for i in range(8)]
        checks = [
            lambda u=u: call(base, "POST", SOURCES + "/test-stream", {"url": u}, signed)
            for u in urls
        ]

        def read_state() -> int:
            upstream.reached.wait(GIVE_UP)  # the preflights hold their threads now
            return call(base, "GET", "/api/broadcast/state")

        reads = [read_state for _ in range(8)]
        results = run_all(checks + reads)
    checked, state = results[:8], results[8:]
    assert all(status in (200, 429) for status in checked), checked
    assert 200 in checked, "no preflight ran"
    assert state == [200] * 8, state
