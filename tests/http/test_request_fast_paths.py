"""The request path reads each header from the WSGI environ once: the answers stay the same.

A body-less request skips the body checks; a request announcing a body still has its
Content-Length checked (a bad value is 400, an over-large one 413), and HTML pages still get
their Content-Security-Policy and ``no-store``.
"""

from __future__ import annotations

import falcon
import falcon.testing
import pytest

from alertstation.http.errors import ErrorRenderer, install_error_handlers
from alertstation.http.middleware import RequestContextMiddleware
from alertstation.http.templates import Templates
from alertstation.settings import parse_networks


class Echo:
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"length": len(req.bounded_stream.read())}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.text = "<p>hello</p>"


def make_app() -> falcon.App:
    app = falcon.App(middleware=[RequestContextMiddleware(parse_networks("127.0.0.0/8"), 100)])
    install_error_handlers(app, ErrorRenderer(Templates()))
    app.add_route("/echo", Echo())
    return app


@pytest.fixture
def client() -> falcon.testing.TestClient:
    return falcon.testing.TestClient(make_app())


@pytest.mark.parametrize("value", ["abc", "-1"])
def test_a_bad_content_length_is_400(value: str) -> None:
    # Called directly: the test client's WSGI validator refuses such an environ itself.
    env = falcon.testing.create_environ("/echo", method="POST", body=b"x")
    env["CONTENT_LENGTH"] = value
    statuses: list[str] = []
    b"".join(make_app()(env, lambda status, headers, exc_info=None: statuses.append(status)))
    assert statuses and statuses[0].startswith("400")


def test_an_over_large_body_is_413_and_a_small_one_is_read(
    client: falcon.testing.TestClient,
) -> None:
    refused = client.simulate_post("/echo", body=b"x" * 101)
    assert refused.status_code == 413 and refused.json["error"]["code"]
    answer = client.simulate_post("/echo", body=b"x" * 100)
    assert answer.status_code == 200 and answer.json == {"length": 100}


def test_headers_of_a_page_and_of_a_proxied_request(client: falcon.testing.TestClient) -> None:
    answer = client.simulate_get(
        "/echo",
        remote_addr="127.0.0.1",
        headers={"X-Forwarded-For": "192.0.2.9", "X-Request-ID": "proxy-id-12345"},
    )
    assert answer.headers["x-request-id"] == "proxy-id-12345"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["content-security-policy"].startswith("default-src 'self'")
    assert answer.headers["x-frame-options"] == "DENY"
    direct = client.simulate_get(
        "/echo", remote_addr="192.0.2.9", headers={"X-Request-ID": "proxy-id-12345"}
    )
    assert direct.headers["x-request-id"] != "proxy-id-12345"  # only a proxy's id is taken
