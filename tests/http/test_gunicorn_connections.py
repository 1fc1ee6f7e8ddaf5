"""Kept-alive connections, chunked bodies, HEAD and long URLs against a real gunicorn."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator

import orjson
import pytest

from tests.processes import station_process

pytestmark = pytest.mark.slow

LARGE = 50_000_000  # over every route's body limit


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """Serve the station with gunicorn (one worker, SQLite) and yield its port."""
    with station_process(tmp_path_factory.mktemp("gunicorn"), "serve") as served:
        served.wait_healthy()
        yield served.port


class RawConnection:
    """One kept-alive socket; reads responses with Content-Length bodies."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def response(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            self._fill()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def closed_by_server(self) -> bool:
        """Wait (generously) for the server to end the connection."""
        self.sock.settimeout(60)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return True
                self.buffer += data
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("server closed the connection")
        self.buffer += data

    def close(self) -> None:
        self.sock.close()


def _request(method: str, path: str, body: bytes = b"", **headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {headers.get('Content_Length', len(body))}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def test_a_413_for_a_body_left_unsent_says_close_and_closes(server: int) -> None:
    conn = RawConnection(server)
    try:
        head = (
            "POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {LARGE}\r\n\r\n"
        )
        conn.send(head.encode() + b"{" + b" " * 1000)
        status, headers, body = conn.response()
        assert status == 413
        assert headers["connection"] == "close"
        assert orjson.loads(body)["error"]["code"] == "payload_too_large"
        assert conn.closed_by_server()
    finally:
        conn.close()


def test_an_early_answer_with_a_small_body_keeps_the_connection_usable(server: int) -> None:
    conn = RawConnection(server)
    try:
        payload = orjson.dumps({"note": "x" * 5000})
        conn.send(
            _request(
                "POST",
                "/admin/poller/sources",
                payload,
                Content_Type="application/json",
                Accept="application/json",
            )
        )
        status, headers, body = conn.response()
        assert status == 401
        assert headers["connection"] == "keep-alive"
        conn.send(_request("GET", "/healthz"))
        status, _, body = conn.response()
        assert status == 200 and orjson.loads(body)["status"] == "ok"
    finally:
        conn.close()


def test_an_early_answer_with_a_large_unread_body_says_close(server: int) -> None:
    conn = RawConnection(server)
    try:
        head = (
            "POST /admin/poller/sources HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\nContent-Length: 500000\r\n\r\n"
        )
        conn.send(head.encode() + b"{")
        status, headers, _ = conn.response()
        assert status == 401
        assert headers["connection"] == "close"
        assert conn.closed_by_server()
    finally:
        conn.close()


def _chunks(data: bytes, size: int = 7) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_a_chunked_body_is_read(server: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server, timeout=60)
    try:
        body = orjson.dumps({"username": "nobody", "password": "wrong password"})
        conn.request(
            "POST",
            "/auth/login",
            body=_chunks(body),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            encode_chunked=True,
        )
        response = conn.getresponse()
        error = orjson.loads(response.read())["error"]
        # The credentials were read and checked, not refused as an empty body.
        assert response.status == 401 and error["code"] == "invalid_credentials"
        conn.request("GET", "/healthz")
        assert conn.getresponse().status == 200
    finally:
        conn.close()


def test_a_chunked_body_over_the_limit_is_413(server: int) -> None:
    conn = RawConnection(server)
    try:
        head = (
            "POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        block = b"x" * 65536
        chunk = f"{len(block):x}\r\n".encode() + block + b"\r\n"
        conn.send(head.encode() + chunk * 20)  # 1.25 MiB, over the 1 MiB default
        status, headers, body = conn.response()
        assert status == 413
        assert orjson.loads(body)["error"]["code"] == "payload_too_large"
        assert headers["connection"] == "close"
    finally:
        conn.close()


def test_head_answers_like_get_on_a_kept_alive_connection(server: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server, timeout=60)
    try:
        for path in ("/healthz", "/api/broadcast/state", "/healthz"):
            conn.request("HEAD", path)
            response = conn.getresponse()
            assert response.status == 200, path
            assert response.read() == b""
            assert int(response.headers["Content-Length"]) > 0
    finally:
        conn.close()


def test_a_5000_character_query_gets_the_json_414(server: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server, timeout=60)
    try:
        conn.request("GET", "/api/broadcast/state?q=" + "a" * 5000)
        response = conn.getresponse()
        assert response.status == 414
        assert response.headers["Content-Type"].startswith("application/json")
        assert orjson.loads(response.read())["error"]["code"] == "uri_too_long"
    finally:
        conn.close()
