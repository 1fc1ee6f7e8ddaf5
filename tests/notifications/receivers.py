"""Loopback receivers for notification tests: a real SMTP server (aiosmtpd) and an HTTP one."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller

from tests.processes import free_port


class _Mailbox:
    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.recipients: list[list[str]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append(message_from_bytes(envelope.content, policy=policy.default))
        self.recipients.append(list(envelope.rcpt_tos))
        return "250 OK"


@contextmanager
def smtp_server() -> Iterator[tuple[int, _Mailbox]]:
    """A real SMTP server on loopback; yields its port and the mailbox it fills."""
    mailbox = _Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield controller.port, mailbox
    finally:
        controller.stop()


@dataclass
class Seen:
    """One request a receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class HttpReceiver:
    """A loopback HTTP server that records POSTs and answers ``status`` after ``delay`` s."""

    status: int = 200
    delay: float = 0.0
    seen: list[Seen] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server_address[1])

    def start(self) -> HttpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                receiver.seen.append(Seen(self.path, dict(self.headers.items()), body))
                if receiver.delay:
                    receiver.release.wait(receiver.delay)
                self.send_response(receiver.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def wait_for(self, count: int, seconds: float = 30.0) -> None:
        deadline = time.monotonic() + seconds
        while len(self.seen) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.seen) >= count, self.seen


@contextmanager
def http_receiver(status: int = 200, delay: float = 0.0) -> Iterator[HttpReceiver]:
    """An :class:`HttpReceiver`, started and stopped."""
    receiver = HttpReceiver(status=status, delay=delay).start()
    try:
        yield receiver
    finally:
        receiver.stop()
