"""HEAD wherever GET, over-long request targets, chunked bodies and unread bodies (in process)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import orjson
import pytest
from sqlalchemy import Engine

from alertstation.app import create_app
from alertstation.context import Station
from alertstation.http.connection import CLOSE_CONNECTION, DRAIN_LIMIT
from alertstation.http.middleware import MAX_TARGET_CHARS
from alertstation.http.routing import PUBLIC, Route, permission
from tests.support import make_settings


class Hello:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"hello": "world"}
        resp.set_header("X-Hello", "1")


class Echo:
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"received": req.get_media()}


class Refuses:
    """Answers 422 before reading the body, as a route that checks its query first would."""

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.status = falcon.HTTP_422
        resp.media = {"error": {"code": "invalid", "message": "no"}}


def _routes(station: Station) -> list[Route]:
    return [
        Route("GET", "/_edge/hello", Hello(), PUBLIC),
        Route("GET", "/_edge/guarded", guarded := Guarded(), permission("system.configure")),
        Route("POST", "/_edge/guarded", guarded, permission("system.configure")),
        Route("POST", "/_edge/echo", Echo(), permission("system.configure"), max_body=200),
        Route("POST", "/_edge/refuses", Refuses(), permission("system.configure")),
    ]


class Guarded(Hello):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"received": req.get_media()}


class AdminIdentity:
    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.get_header("X-Test-Anonymous") is None:
            req.context.user = type("U", (), {"username": "a", "role": "admin"})()


@pytest.fixture
def app(tmp_path: Path, engine: Engine) -> falcon.App:
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    return create_app(
        settings, engine=engine, extra_routes=_routes, identity_middleware=[AdminIdentity()]
    )


@pytest.fixture
def client(app: falcon.App) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(app)


# --- HEAD ----------------------------------------------------------------------------------------


def test_head_answers_wherever_get_does_with_the_get_headers_and_no_body(
    client: falcon.testing.TestClient,
) -> None:
    get = client.simulate_get("/_edge/hello")
    head = client.simulate_head("/_edge/hello")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["X-Hello"] == "1"
    assert head.headers["content-length"] == str(len(get.content))
    assert client.simulate_head("/healthz").status_code == 200
    assert client.simulate_head("/api/broadcast/state").status_code == 200


def test_head_takes_the_access_rule_of_get(client: falcon.testing.TestClient) -> None:
    anonymous = client.simulate_head("/_edge/guarded", headers={"X-Test-Anonymous": "1"})
    assert anonymous.status_code == 401
    assert client.simulate_head("/_edge/guarded").status_code == 200


def test_head_is_listed_in_allow_and_refused_where_there_is_no_get(
    client: falcon.testing.TestClient,
) -> None:
    wrong = client.simulate_put("/_edge/guarded")
    assert wrong.status_code == 405
    assert wrong.headers["allow"].replace(" ", "").split(",") == ["GET", "HEAD", "POST"]
    assert client.simulate_head("/_edge/echo").status_code == 405


# --- request target ------------------------------------------------------------------------------


def test_an_over_long_request_target_gets_the_json_414(client: falcon.testing.TestClient) -> None:
    result = client.simulate_get("/_edge/hello", query_string="q=" + "a" * 5000)
    assert result.status_code == 414
    assert result.json["error"]["code"] == "uri_too_long"
    assert str(MAX_TARGET_CHARS) in result.json["error"]["message"]
    assert result.headers["X-Request-ID"]


def test_a_target_at_the_limit_is_served(client: falcon.testing.TestClient) -> None:
    query = "q=" + "a" * (MAX_TARGET_CHARS - len("/_edge/hello?q="))
    assert len("/_edge/hello?" + query) == MAX_TARGET_CHARS
    assert client.simulate_get("/_edge/hello", query_string=query).status_code == 200


# --- chunked bodies ------------------------------------------------------------------------------


def _chunked(app: falcon.App, path: str, body: bytes, *, terminated: bool = True) -> Any:
    env = falcon.testing.create_environ(
        path=path,
        method="POST",
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )
    env.pop("CONTENT_LENGTH", None)
    env["wsgi.input"] = io.BytesIO(body)
    if terminated:
        env["wsgi.input_terminated"] = True
    start = falcon.testing.StartResponseMock()
    content = b"".join(app(env, start))
    return start.status, orjson.loads(content) if content else None, env


def test_a_chunked_body_is_read(app: falcon.App) -> None:
    status, body, _ = _chunked(app, "/_edge/echo", b'{"message": "tornado"}')
    assert status == "200 OK"
    assert body == {"received": {"message": "tornado"}}


def test_a_chunked_body_over_the_route_limit_is_413(app: falcon.App) -> None:
    status, body, env = _chunked(app, "/_edge/echo", orjson.dumps({"m": "x" * 300}))
    assert status.startswith("413")
    assert body["error"]["code"] == "payload_too_large"
    assert env[CLOSE_CONNECTION] is True  # the rest of the body is still on the socket


def test_a_chunked_body_the_server_does_not_delimit_is_411(app: falcon.App) -> None:
    status, body, _ = _chunked(app, "/_edge/echo", b'{"a": 1}', terminated=False)
    assert status.startswith("411")
    assert body["error"]["code"] == "length_required"


def test_a_malformed_chunked_body_is_400_and_closes_the_connection(app: falcon.App) -> None:
    from gunicorn.http.body import Body, ChunkedReader
    from gunicorn.http.unreader import IterUnreader

    for framing in (b"zz\r\n{}\r\n0\r\n\r\n", b"2\r\n{}XX0\r\n\r\n", b"8\r\n{}"):
        env = falcon.testing.create_environ(
            path="/_edge/echo",
            method="POST",
            headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        )
        env.pop("CONTENT_LENGTH", None)
        # gunicorn's own reader of chunked framing, over the bytes a client sent
        env["wsgi.input"] = Body(ChunkedReader(object(), IterUnreader([framing])))
        env["wsgi.input_terminated"] = True
        start = falcon.testing.StartResponseMock()
        body = orjson.loads(b"".join(app(env, start)))
        assert start.status.startswith("400"), (framing, start.status)
        assert body["error"]["code"] == "malformed_body"
        assert env[CLOSE_CONNECTION] is True


# --- unread bodies -------------------------------------------------------------------------------


def _post(
    app: falcon.App, path: str, body: bytes, *, terminated: bool = True, **headers: str
) -> tuple[str, dict[str, Any]]:
    env = falcon.testing.create_environ(
        path=path, method="POST", body=body, headers={"Content-Type": "application/json", **headers}
    )
    if terminated:  # as gunicorn marks its input, which ends with the body
        env["wsgi.input_terminated"] = True
    start = falcon.testing.StartResponseMock()
    b"".join(app(env, start))
    return start.status, env


def test_a_small_unread_body_is_drained_and_the_connection_kept(app: falcon.App) -> None:
    body = b'{"a": "' + b"x" * 1000 + b'"}'
    status, env = _post(app, "/_edge/refuses", body)
    assert status.startswith("422")
    assert env["wsgi.input"].read() == b""  # nothing left for the next request to trip on
    assert not env.get(CLOSE_CONNECTION)
    status, env = _post(app, "/_edge/guarded", body, **{"X-Test-Anonymous": "1"})
    assert status.startswith("401")
    assert env["wsgi.input"].read() == b"" and not env.get(CLOSE_CONNECTION)


def test_a_large_unread_body_closes_the_connection(app: falcon.App) -> None:
    status, env = _post(app, "/_edge/refuses", b"x" * (DRAIN_LIMIT + 1))
    assert status.startswith("422")
    assert env[CLOSE_CONNECTION] is True


def test_a_read_body_leaves_the_connection_open(app: falcon.App) -> None:
    status, env = _post(app, "/_edge/echo", b'{"a": 1}')
    assert status == "200 OK"
    assert not env.get(CLOSE_CONNECTION)


class _SocketLikeInput(io.BytesIO):
    """An unbounded server input (wsgiref's socket file): a read past the body would block."""

    def __init__(self, body: bytes) -> None:
        super().__init__(body)
        self.size = len(body)

    def read(self, size: int | None = -1) -> bytes:
        if self.tell() >= self.size:
            raise AssertionError("read past the body: a real socket would block here")
        return super().read(size)


def test_an_unbounded_input_is_never_read_past_the_body(app: falcon.App) -> None:
    body = b'{"a": "' + b"x" * 100 + b'"}'
    env = falcon.testing.create_environ(
        path="/_edge/refuses",
        method="POST",
        body=body,
        headers={"Content-Type": "application/json"},
    )
    stream = _SocketLikeInput(body)
    stream.read()  # read around falcon's counting stream, as a multipart parser may
    env["wsgi.input"] = stream
    start = falcon.testing.StartResponseMock()
    b"".join(app(env, start))
    assert start.status.startswith("422")
    assert env[CLOSE_CONNECTION] is True  # the server closes instead of waiting for bytes
