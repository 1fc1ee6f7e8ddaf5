"""Every error is the JSON envelope (or a page for browsers); every response has a request id."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import pytest
from sqlalchemy import Engine

from alertstation.app import create_app
from alertstation.context import Station
from alertstation.errors import Conflict, Invalid
from alertstation.http.routing import PUBLIC, Route, permission
from tests.support import make_settings


class Faulty:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        raise RuntimeError("secret internals: password=hunter2")


class Conflicted:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        raise Conflict("already there", code="lockout_risk", client_ip="192.0.2.1")


class Echo:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        raise Invalid("bad field")

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = req.get_media()


def _error_routes(station: Station) -> list[Route]:
    return [
        Route("GET", "/_err/faulty", Faulty(), PUBLIC),
        Route("GET", "/_err/conflict", Conflicted(), PUBLIC),
        Route("GET", "/_err/echo", echo := Echo(), PUBLIC),
        Route("POST", "/_err/echo", echo, permission("system.configure")),
        Route("POST", "/_err/upload", Upload(), permission("system.configure"), max_body=500),
    ]


class Upload:
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"bytes": len(req.bounded_stream.read())}


class AdminIdentity:
    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.user = type("U", (), {"username": "a", "role": "admin"})()


@pytest.fixture
def err_client(tmp_path: Path, engine: Engine) -> falcon.testing.TestClient:
    settings = make_settings(
        tmp_path, engine.url.render_as_string(hide_password=False), max_request_bytes=64
    )
    app = create_app(
        settings, engine=engine, extra_routes=_error_routes, identity_middleware=[AdminIdentity()]
    )
    return falcon.testing.TestClient(app)


def _envelope(result: Any) -> dict[str, Any]:
    assert result.headers["content-type"].startswith("application/json")
    body = result.json
    assert set(body) == {"error"}
    assert {"code", "message"} <= set(body["error"])
    return body["error"]


def test_unknown_path_is_404_envelope(err_client: falcon.testing.TestClient) -> None:
    result = err_client.simulate_get("/no/such/page")
    assert result.status_code == 404
    assert _envelope(result) == {
        "code": "not_found",
        "message": "Nothing is served at /no/such/page.",
    }


def test_wrong_method_is_405_envelope_with_allow(err_client: falcon.testing.TestClient) -> None:
    result = err_client.simulate_delete("/healthz")
    assert result.status_code == 405
    assert _envelope(result)["code"] == "method_not_allowed"
    assert "GET" in result.headers["allow"]


def test_service_errors_keep_code_and_details(err_client: falcon.testing.TestClient) -> None:
    result = err_client.simulate_get("/_err/conflict")
    assert result.status_code == 409
    assert _envelope(result) == {
        "code": "lockout_risk",
        "message": "already there",
        "details": {"client_ip": "192.0.2.1"},
    }
    result = err_client.simulate_get("/_err/echo")
    assert result.status_code == 422
    assert _envelope(result)["code"] == "invalid"


def test_unexpected_exception_is_500_without_internals(
    err_client: falcon.testing.TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="alertstation.http"):
        result = err_client.simulate_get("/_err/faulty")
    assert result.status_code == 500
    error = _envelope(result)
    assert error["code"] == "internal_error"
    assert "hunter2" not in result.text and "RuntimeError" not in result.text
    assert result.headers["x-request-id"] in error["message"]
    assert any("unhandled error" in record.getMessage() for record in caplog.records)


def test_malformed_json_is_400_envelope(err_client: falcon.testing.TestClient) -> None:
    result = err_client.simulate_post(
        "/_err/echo", body=b"{nope", headers={"Content-Type": "application/json"}
    )
    assert result.status_code == 400
    assert _envelope(result)["code"] == "bad_request"


def test_json_round_trip_through_orjson(err_client: falcon.testing.TestClient) -> None:
    result = err_client.simulate_post("/_err/echo", json={"a": [1, 2, "é"]})
    assert result.status_code == 200
    assert result.json == {"a": [1, 2, "é"]}


def test_oversized_body_is_413_envelope(err_client: falcon.testing.TestClient) -> None:
    result = err_client.simulate_post("/_err/echo", json={"pad": "x" * 200})
    assert result.status_code == 413
    assert _envelope(result)["code"] == "payload_too_large"


def test_a_route_may_accept_larger_bodies_than_the_station_limit(
    err_client: falcon.testing.TestClient,
) -> None:
    assert err_client.simulate_post("/_err/upload", body=b"x" * 400).json == {"bytes": 400}
    assert err_client.simulate_post("/_err/upload", body=b"x" * 501).status_code == 413
    assert err_client.simulate_post("/_err/echo", json={"pad": "x" * 200}).status_code == 413


def test_browser_gets_an_html_error_page(err_client: falcon.testing.TestClient) -> None:
    result = err_client.simulate_get(
        "/no/such/page", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    )
    assert result.status_code == 404
    assert result.headers["content-type"].startswith("text/html")
    assert 'data-code="not_found"' in result.text
    api = err_client.simulate_get("/api/nothing", headers={"Accept": "text/html"})
    assert api.headers["content-type"].startswith("application/json")


def test_request_id_is_fresh_unless_the_trusted_proxy_sets_one(
    err_client: falcon.testing.TestClient,
) -> None:
    first = err_client.simulate_get("/healthz").headers["x-request-id"]
    second = err_client.simulate_get("/healthz").headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", first) and first != second
    from_proxy = err_client.simulate_get(
        "/healthz", headers={"X-Request-ID": "proxy-abc-123"}, remote_addr="127.0.0.1"
    )
    assert from_proxy.headers["x-request-id"] == "proxy-abc-123"
    from_outside = err_client.simulate_get(
        "/healthz", headers={"X-Request-ID": "evil-abc-123"}, remote_addr="198.51.100.1"
    )
    assert from_outside.headers["x-request-id"] != "evil-abc-123"
    injected = err_client.simulate_get(
        "/healthz", headers={"X-Request-ID": "bad id\r\nx"}, remote_addr="127.0.0.1"
    )
    assert injected.headers["x-request-id"] != "bad id\r\nx"


def test_security_headers_on_every_response(err_client: falcon.testing.TestClient) -> None:
    for path in ("/healthz", "/no/such/page", "/docs"):
        headers = err_client.simulate_get(path).headers
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
