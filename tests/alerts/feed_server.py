"""A real HTTP server on 127.0.0.1 serving canned alert feeds, for the poller's tests.

Each path answers from a script of :class:`Canned` responses (the last one repeats). A response
with an ``etag`` or ``last_modified`` answers 304 when the request carries the matching
``If-None-Match`` or ``If-Modified-Since``, as a real server would. Every request is recorded
with its path and headers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Canned:
    """One answer: status, body, content type, validators, extra headers, a delay first."""

    body: bytes = b""
    status: int = 200
    content_type: str = "application/json"
    etag: str | None = None
    last_modified: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    send_length: bool = True


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]


class FeedServer:
    """Serve scripted answers per path and remember the requests."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[Canned]] = {}
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        """Return ``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """Return the full URL of ``path``."""
        return self.base + path

    def serve(self, path: str, *answers: Canned) -> None:
        """Answer ``path`` (with its query) with these responses in turn, the last one repeating."""
        with self._lock:
            self.scripts[path] = list(answers)

    def seen(self, path: str | None = None) -> list[Seen]:
        """Return the requests received (for one path when given)."""
        with self._lock:
            return [r for r in self.requests if path is None or r.path == path]

    def next_answer(self, path: str) -> Canned | None:
        with self._lock:
            script = self.scripts.get(path)
            if not script:
                return None
            return script.pop(0) if len(script) > 1 else script[0]

    def record(self, path: str, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(Seen(path, headers))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    """Answer from the owner's scripts; the owner is set on a subclass per server."""

    protocol_version = "HTTP/1.1"
    owner: FeedServer

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        headers = {key.lower(): value for key, value in self.headers.items()}
        self.owner.record(self.path, headers)
        answer = self.owner.next_answer(self.path)
        if answer is None:
            self._send(Canned(b"not found", status=404, content_type="text/plain"))
            return
        if answer.delay:
            time.sleep(answer.delay)
        if answer.status == 200 and _unchanged(answer, headers):
            self.send_response(304)
            if answer.etag:
                self.send_header("ETag", answer.etag)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._send(answer)

    def _send(self, answer: Canned) -> None:
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        if answer.etag:
            self.send_header("ETag", answer.etag)
        if answer.last_modified:
            self.send_header("Last-Modified", answer.last_modified)
        for key, value in answer.headers.items():
            self.send_header(key, value)
        if answer.send_length:
            self.send_header("Content-Length", str(len(answer.body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        try:
            self.wfile.write(answer.body)
        except OSError:
            pass  # the client gave up (a timeout or size test)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except OSError:
            self.close_connection = True


def _handler(owner: FeedServer) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"owner": owner})


def _unchanged(answer: Canned, headers: dict[str, str]) -> bool:
    """Apply RFC 9110: If-None-Match decides when sent; else If-Modified-Since (exact match)."""
    if "if-none-match" in headers:
        return answer.etag is not None and headers["if-none-match"] == answer.etag
    return bool(answer.last_modified and headers.get("if-modified-since") == answer.last_modified)


@contextmanager
def running_server() -> Iterator[FeedServer]:
    """Start a FeedServer for the duration of a ``with`` block."""
    server = FeedServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
