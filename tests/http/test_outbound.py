"""The one outbound HTTP client: redirects hop by hop, credentials, limits, and no other client."""

from __future__ import annotations

import ast
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from alertstation.http.outbound import FetchError, Limits, OutboundClient, basic_auth, deadline
from tests.audio.slow_upstream import MODES, slow_upstream
from tests.notifications.receivers import http_receiver

SOURCE = Path(__file__).resolve().parents[2] / "src" / "alertstation"


class _Site:
    """A loopback server on two ports ("hosts"): records what each request carried."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str, str | None]] = []
        self.servers = [self._serve() for _ in range(2)]

    def _serve(self) -> ThreadingHTTPServer:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                port = self.server.server_address[1]
                site.seen.append((port, self.path, self.headers.get("Authorization")))
                if self.path.startswith("/hop-to-other"):
                    self.send_response(302)
                    self.send_header("Location", f"http://127.0.0.1:{site.ports[1]}/landing")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path.startswith("/hop-local"):
                    self.send_response(301)
                    self.send_header("Location", "/landing")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path == "/big":
                    body = b"x" * 5000
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif self.path == "/missing":
                    body = b"no"
                    self.send_response(404)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    body = b"landed"
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    @property
    def ports(self) -> list[int]:
        return [server.server_address[1] for server in self.servers]

    def url(self, path: str, host: int = 0) -> str:
        return f"http://127.0.0.1:{self.ports[host]}{path}"

    def close(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()


@pytest.fixture
def site() -> Iterator[_Site]:
    served = _Site()
    yield served
    served.close()


def test_credentials_in_the_url_become_a_header_that_does_not_follow_another_host(
    site: _Site,
) -> None:
    client = OutboundClient()
    url = site.url("/hop-to-other").replace("http://", "http://ops:s3cret@")
    fetched = client.get(url, Limits())
    assert fetched.body == b"landed"
    first, second = site.seen
    assert first == (site.ports[0], "/hop-to-other", basic_auth("ops", "s3cret"))
    assert second == (site.ports[1], "/landing", None)
    assert fetched.url == site.url("/landing", host=1)


def test_a_redirect_on_the_same_host_keeps_the_credentials(site: _Site) -> None:
    client = OutboundClient()
    fetched = client.get(site.url("/hop-local"), Limits(), headers={"Authorization": "Bearer t"})
    assert fetched.body == b"landed"
    assert [auth for _, _, auth in site.seen] == ["Bearer t", "Bearer t"]


def test_the_callers_redirect_check_sees_each_hop_and_can_refuse_it(site: _Site) -> None:
    hops: list[tuple[str, str]] = []

    def same_port_only(source: str, target: str) -> None:
        hops.append((source, target))
        if str(site.ports[0]) not in target:
            raise FetchError("refused: another host")

    with pytest.raises(FetchError, match="another host"):
        OutboundClient().get(site.url("/hop-to-other"), Limits(), on_redirect=same_port_only)
    assert hops == [(site.url("/hop-to-other"), site.url("/landing", host=1))]
    assert [path for _, path, _ in site.seen] == ["/hop-to-other"]


def test_no_redirects_allowed_means_the_redirect_is_an_error(site: _Site) -> None:
    with pytest.raises(FetchError) as caught:
        OutboundClient().get(site.url("/hop-local"), Limits(), max_redirects=0)
    assert caught.value.status == 301 and "redirect refused" in caught.value.reason


def test_status_and_size_limit_are_errors_without_the_url(site: _Site) -> None:
    client = OutboundClient()
    with pytest.raises(FetchError) as missing:
        client.get(site.url("/missing"), Limits())
    assert missing.value.status == 404 and "127.0.0.1" not in missing.value.reason
    with pytest.raises(FetchError, match="larger than the limit of 1000 bytes"):
        client.get(site.url("/big"), Limits(max_bytes=1000))
    assert len(client.get(site.url("/big"), Limits(max_bytes=5000)).body) == 5000


def test_a_refused_connection_is_described_without_the_url() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(FetchError) as caught:
        OutboundClient().get(f"http://user:pw@127.0.0.1:{port}/x", Limits(connect_timeout=30))
    assert caught.value.reason.startswith("cannot connect")
    assert "pw" not in caught.value.reason


HTTP_CLIENT_MODULES = {"urllib3", "urllib.request", "http.client", "requests", "httpx", "aiohttp"}


@pytest.mark.parametrize("mode", MODES)
def test_a_trickling_answer_ends_at_the_requests_deadline(mode: str) -> None:
    # A byte every 0.1 s satisfies a read timeout of 30 s for ever; the deadline still ends it.
    limits = Limits(read_timeout=30.0, deadline=0.5)
    with slow_upstream() as upstream, pytest.raises(FetchError) as ended:
        OutboundClient().get(upstream.url(mode), limits)
    assert "deadline" in ended.value.reason


def test_an_outer_deadline_bounds_several_requests_and_a_stalled_tls_handshake() -> None:
    quiet = socket.socket()
    quiet.bind(("127.0.0.1", 0))
    quiet.listen(8)  # accepts (the kernel does) and never says a word of TLS
    port = quiet.getsockname()[1]
    client = OutboundClient()
    try:
        with deadline(0.5), pytest.raises(FetchError) as ended:
            client.get(f"https://127.0.0.1:{port}/", Limits(read_timeout=30.0, deadline=60.0))
        assert "deadline of 0.5 s" in ended.value.reason
    finally:
        quiet.close()


#: Libraries that reach the network for notifications: only the delivery module names them.
NOTIFY_MODULES = {"apprise", "smtplib"}
#: The one other place allowed to reach the network: the worker's notification delivery.
DELIVERY = SOURCE / "notifications" / "delivery.py"


def _named_modules(tree: ast.AST) -> list[str]:
    """Every module a file imports or names through ``lazy.module("…")``."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("module", "load")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "lazy"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.append(str(node.args[0].value))
    return names


def test_only_the_outbound_module_imports_an_http_client_library() -> None:
    offenders = []
    for path in SOURCE.rglob("*.py"):
        names = _named_modules(ast.parse(path.read_text(), str(path)))
        if path != SOURCE / "http" / "outbound.py":
            offenders += [
                f"{path.relative_to(SOURCE)}: {name}"
                for name in names
                if name in HTTP_CLIENT_MODULES or name.split(".")[0] in {"urllib3", "requests"}
            ]
        if path != DELIVERY:
            offenders += [
                f"{path.relative_to(SOURCE)}: {name}"
                for name in names
                if name.split(".")[0] in NOTIFY_MODULES
            ]
    assert offenders == []


def test_the_delivery_module_is_the_one_that_names_apprise() -> None:
    names = _named_modules(ast.parse(DELIVERY.read_text(), str(DELIVERY)))
    assert "apprise" in names


def test_a_post_follows_no_redirect_and_a_refusal_names_no_url() -> None:
    client = OutboundClient()
    with http_receiver(status=200) as ok, http_receiver(status=302) as moved:
        answer = client.post(
            f"http://u:pw@127.0.0.1:{ok.port}/in", b"{}", Limits(), headers={"X-A": "1"}
        )
        assert answer.status == 200 and answer.body == b"ok"
        (seen,) = ok.seen
        assert seen.body == b"{}" and seen.headers["Authorization"] == basic_auth("u", "pw")
        with pytest.raises(FetchError) as refused:
            client.post(f"http://127.0.0.1:{moved.port}/secret-path", b"x", Limits())
    assert refused.value.status == 302 and "secret-path" not in refused.value.reason
    client.close()
