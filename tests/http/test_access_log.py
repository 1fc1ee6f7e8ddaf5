"""The access log line: the same JSON whether built directly for the background writer or logged.

``alertstation serve`` writes its logs from a background thread (``BackgroundLineHandler``) and
the request context middleware builds each access line directly for it; any other logging set-up
gets the line through a log record and the JSON formatter. Both give the same line.
"""

from __future__ import annotations

import io
import logging
import random
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import falcon
import falcon.testing
import orjson
import pytest

from alertstation.http.middleware import RequestContextMiddleware
from alertstation.logs import (
    BackgroundLineHandler,
    JsonFormatter,
    access_line_writer,
    configure_logging,
    iso_millis,
)
from alertstation.operations.public.errorlog import RecentErrors
from alertstation.settings import parse_networks


class Hello:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"hello": "world"}


@pytest.fixture
def station_logger() -> Iterator[io.StringIO]:
    """A buffer for configure_logging to write to; the station logger is restored afterwards."""
    logger = logging.getLogger("alertstation")
    saved = (logger.handlers[:], logger.level, logger.propagate)
    stream = io.StringIO()
    yield stream
    for handler in logger.handlers:
        if handler not in saved[0]:
            handler.close()
    logger.handlers[:], logger.level, logger.propagate = saved


def client() -> falcon.testing.TestClient:
    app = falcon.App(middleware=[RequestContextMiddleware(parse_networks("127.0.0.0/8"), 1024)])
    app.add_route("/hello", Hello())
    return falcon.testing.TestClient(app)


def logged_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    for handler in logging.getLogger("alertstation").handlers:
        handler.flush()
    return [orjson.loads(line) for line in stream.getvalue().splitlines()]


def request_line(stream: io.StringIO) -> tuple[dict[str, Any], str]:
    answer = client().simulate_get(
        "/hello", headers={"X-Forwarded-For": "192.0.2.7"}, remote_addr="127.0.0.1"
    )
    assert answer.status_code == 200
    (line,) = logged_lines(stream)
    return line, answer.headers["x-request-id"]


@pytest.mark.parametrize("background", [True, False])
def test_access_line_has_every_field(station_logger: io.StringIO, background: bool) -> None:
    configure_logging("INFO", "json", background=background, stream=station_logger)
    line, request_id = request_line(station_logger)
    assert list(line) == [
        "time",
        "level",
        "logger",
        "message",
        "request_id",
        "method",
        "path",
        "status",
        "duration_ms",
        "client_ip",
        "user",
    ]
    datetime.fromisoformat(line["time"])
    assert line["level"] == "info" and line["logger"] == "alertstation.access"
    assert line["message"] == "GET /hello 200"
    assert line["request_id"] == request_id
    assert (line["method"], line["path"], line["status"]) == ("GET", "/hello", 200)
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert line["client_ip"] == "192.0.2.7" and line["user"] is None


def test_direct_line_equals_the_formatters_line(station_logger: io.StringIO) -> None:
    configure_logging("INFO", "json", background=True, stream=station_logger)
    direct, _ = request_line(station_logger)
    station_logger.seek(0)
    station_logger.truncate()
    configure_logging("INFO", "json", background=False, stream=station_logger)
    formatted, _ = request_line(station_logger)
    for line in (direct, formatted):  # the parts that differ from request to request
        del line["time"], line["duration_ms"], line["request_id"]
    assert direct == formatted


def test_access_line_respects_the_level(station_logger: io.StringIO) -> None:
    configure_logging("WARNING", "json", background=True, stream=station_logger)
    client().simulate_get("/hello")
    assert logged_lines(station_logger) == []


def test_other_handlers_get_a_log_record(
    station_logger: io.StringIO, caplog: pytest.LogCaptureFixture
) -> None:
    configure_logging("INFO", "json", background=True, stream=station_logger)
    logging.getLogger("alertstation").addHandler(caplog.handler)  # a second handler
    try:
        client().simulate_get("/hello")
    finally:
        logging.getLogger("alertstation").removeHandler(caplog.handler)
    assert [r.getMessage() for r in caplog.records] == ["GET /hello 200"]
    assert caplog.records[0].status == 200
    assert [line["message"] for line in logged_lines(station_logger)] == ["GET /hello 200"]


def test_background_writer_keeps_every_line_whole_under_threads() -> None:
    stream = io.StringIO()
    handler = BackgroundLineHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("alertstation.test_background_writer")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)

    def log_many(thread: int) -> None:
        for n in range(500):
            logger.info("line %d", n, extra={"worker": thread, "n": n})

    threads = [threading.Thread(target=log_many, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    handler.flush()
    lines = [orjson.loads(line) for line in stream.getvalue().splitlines()]
    assert sorted((line["worker"], line["n"]) for line in lines) == [
        (t, n) for t in range(8) for n in range(500)
    ]
    for t in range(8):  # each thread's lines in the order it logged them
        assert [line["n"] for line in lines if line["worker"] == t] == list(range(500))
    logger.info("last")
    handler.close()  # close writes what is queued
    assert orjson.loads(stream.getvalue().splitlines()[-1])["message"] == "last"
    logger.handlers[:] = []


def test_the_recent_errors_ring_keeps_the_direct_line(station_logger: io.StringIO) -> None:
    # The ring (at ERROR) sits beside the writer once the diagnostics are in use; an INFO access
    # line would never reach it, so the line still goes straight to the writer.
    configure_logging("INFO", "json", background=True, stream=station_logger)
    station = logging.getLogger("alertstation")
    station.addHandler(RecentErrors())
    [writer] = [h for h in station.handlers if isinstance(h, BackgroundLineHandler)]
    assert access_line_writer(logging.getLogger("alertstation.access"), logging.INFO) is writer
    line, _ = request_line(station_logger)
    assert line["message"] == "GET /hello 200" and line["client_ip"] == "192.0.2.7"
    station.addHandler(logging.NullHandler())  # a handler that takes INFO: a log record again
    assert access_line_writer(logging.getLogger("alertstation.access"), logging.INFO) is None


@pytest.mark.parametrize(
    "created",
    [0.0, 1.0005, 1.9995, 1.9999995, 1_800_000_000.0004999, 1_800_000_059.9999996, -0.25],
)
def test_iso_millis_is_the_formatters_time(created: float) -> None:
    expected = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
    assert iso_millis(created) == expected


def test_iso_millis_over_many_times() -> None:
    rng = random.Random(20261124)
    for _ in range(20_000):
        created = rng.uniform(1_700_000_000, 1_900_000_000)
        expected = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
        assert iso_millis(created) == expected, created
