"""A loopback server whose every answer trickles: one byte at a time, never finishing.

Modes, by path: ``/status`` trickles the status line, ``/headers`` a header, ``/body`` the body
of a stream, ``/list.m3u`` the body of a playlist. Each connection sends a byte every
``interval`` seconds until the client goes away or the server stops.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager

MODES = ("/status", "/headers", "/body", "/list.m3u")
_START = {
    "/status": b"",
    "/headers": b"HTTP/1.1 200 OK\r\nContent-Type: audio/mpeg\r\nX-Slow: ",
    "/body": b"HTTP/1.1 200 OK\r\nContent-Type: audio/mpeg\r\n\r\n",
    "/list.m3u": b"HTTP/1.1 200 OK\r\nContent-Type: audio/x-mpegurl\r\n\r\n#EXTM3U\n",
}
_TRICKLE = {
    "/status": b"HTTP/1.1 200 OK",
    "/headers": b"a",
    "/body": b"\xff",
    "/list.m3u": b"#",
}


class SlowUpstream:
    """Serve every mode on one loopback port; count the connections that reached it."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.stopping = threading.Event()
        self.connections = 0
        self.reached = threading.Event()  # set once two connections are trickling
        self._lock = threading.Lock()
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                owner.trickle(self.request)

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)

    def url(self, mode: str) -> str:
        """Return the URL of one mode."""
        return f"http://127.0.0.1:{self.port}{mode}"

    def trickle(self, sock: socket.socket) -> None:
        with self._lock:
            self.connections += 1
            if self.connections >= 2:
                self.reached.set()
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = sock.recv(4096)
            if not chunk:
                return
            request += chunk
        path = request.split(b" ", 2)[1].decode()
        mode = next((m for m in MODES if path.startswith(m)), "/body")
        try:
            sock.sendall(_START[mode])
            position = 0
            pattern = _TRICKLE[mode]
            while not self.stopping.wait(self.interval):
                sock.sendall(pattern[position % len(pattern) : position % len(pattern) + 1])
                position += 1
        except OSError:
            return  # the client went away

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@contextmanager
def slow_upstream(interval: float = 0.1) -> Iterator[SlowUpstream]:
    """Run a SlowUpstream for the ``with`` block."""
    server = SlowUpstream(interval)
    server.start()
    try:
        yield server
    finally:
        server.stop()
