"""A loopback HTTP audio stream for the monitor's tests: WAV over HTTP, paced, with ICY titles.

``serve(path, *answers)`` scripts a path: an ``int`` answers that status (the last answer
repeats); ``"stream"`` streams the server's PCM as a WAV file, in real time times ``speed``,
looping, with ``icy-metaint`` metadata when the client asks for it. ``credentials`` (user,
password) makes every path answer 401 without the right Basic header. Requests are recorded.
"""

from __future__ import annotations

import base64
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

METAINT = 4096


def wav_header(rate: int) -> bytes:
    """Return a WAV header for mono s16le of unknown (maximal) length."""
    size = 0x7FFFFFF0
    return (
        b"RIFF"
        + struct.pack("<I", size)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
        + b"data"
        + struct.pack("<I", size - 36)
    )


class StreamServer:
    """Serve scripted answers and endless paced WAV streams on 127.0.0.1."""

    def __init__(self, pcm: np.ndarray, rate: int, *, speed: float = 1.0) -> None:
        self.pcm = pcm.astype("<i2").tobytes()
        self.rate = rate
        self.speed = speed
        self.title = "Station ID"
        self.credentials: tuple[str, str] | None = None
        self.scripts: dict[str, list[Any]] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.lock = threading.Lock()
        self.closing = threading.Event()
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def serve(self, path: str, *answers: Any) -> None:
        with self.lock:
            self.scripts[path] = list(answers)

    def count(self, path: str) -> int:
        with self.lock:
            return sum(1 for seen, _ in self.requests if seen == path)

    def next_answer(self, path: str) -> Any:
        with self.lock:
            script = self.scripts.get(path)
            if not script:
                return 404
            return script.pop(0) if len(script) > 1 else script[0]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    owner: StreamServer

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        owner = self.owner
        headers = {key.lower(): value for key, value in self.headers.items()}
        with owner.lock:
            owner.requests.append((self.path, headers))
        if owner.credentials is not None:
            user, password = owner.credentials
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            if headers.get("authorization") != f"Basic {token}":
                self._status(401)
                return
        answer = owner.next_answer(self.path)
        if answer != "stream":
            self._status(int(answer))
            return
        self.send_response(200)
        self.send_header("Content-Type", "audio/wav")
        self.send_header("Connection", "close")
        icy = headers.get("icy-metadata") == "1"
        if icy:
            self.send_header("icy-metaint", str(METAINT))
        self.end_headers()
        self.close_connection = True
        self._stream(icy)

    def _stream(self, icy: bool) -> None:
        owner = self.owner
        data = wav_header(owner.rate)
        position = 0
        step = owner.rate // 10 * 2  # 0.1 s
        started = time.monotonic()
        sent = 0.0
        until_meta = METAINT
        try:
            while not owner.closing.is_set():
                if len(data) < step:
                    end = position + step
                    data += owner.pcm[position:end]
                    position = end if end < len(owner.pcm) else 0
                    continue
                piece, data = data[:step], data[step:]
                out = b""
                while icy and len(piece) >= until_meta:
                    meta = f"StreamTitle='{owner.title}';".encode()
                    meta += b"\x00" * (-len(meta) % 16)
                    out += piece[:until_meta] + bytes([len(meta) // 16]) + meta
                    piece = piece[until_meta:]
                    until_meta = METAINT
                if icy:
                    until_meta -= len(piece)
                self.wfile.write(out + piece)
                self.wfile.flush()
                sent += 0.1 / owner.speed
                delay = started + sent - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        except OSError:
            return

    def _status(self, status: int) -> None:
        body = f"status {status}".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def _handler(owner: StreamServer) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"owner": owner})


@contextmanager
def running_stream_server(pcm: np.ndarray, rate: int, **kw: Any) -> Iterator[StreamServer]:
    server = StreamServer(pcm, rate, **kw)
    server._thread.start()
    try:
        yield server
    finally:
        server.closing.set()
        server._server.shutdown()
        server._server.server_close()
        server._thread.join(timeout=5)
