"""Base layout, cache-busted static URLs, static serving and the health check."""

from __future__ import annotations

import threading
from pathlib import Path

import falcon.testing
import pytest
from sqlalchemy import Engine, event

from alertstation.app import create_app
from alertstation.http.templates import Templates
from alertstation.version import __version__
from tests.support import create_database, drop_database, make_settings


def test_static_url_appends_version_after_file_name() -> None:
    templates = Templates()
    assert templates.static_url("css/app.css") == f"/static/css/app.css?v={__version__}"
    assert templates.static_url("/js/app.js") == f"/static/js/app.js?v={__version__}"
    with pytest.raises(ValueError, match="does not exist"):
        templates.static_url("css/missing.css")
    with pytest.raises(ValueError, match="does not exist"):
        templates.static_url("../templates/base.html")


def test_public_docs_page_uses_base_layout(client: falcon.testing.TestClient) -> None:
    result = client.simulate_get("/docs")
    assert result.status_code == 200
    assert result.headers["content-type"].startswith("text/html")
    html = result.text
    assert f'href="/static/css/app.css?v={__version__}"' in html
    assert '<nav aria-label="Main">' in html
    assert 'href="/docs" aria-current="page"' in html
    assert "default-src 'self'" in result.headers["content-security-policy"]


def test_overview_needs_sign_in(client: falcon.testing.TestClient) -> None:
    result = client.simulate_get("/")
    assert result.status_code == 401
    assert result.json["error"]["code"] == "unauthorized"


def test_static_files_are_public_and_cached_when_versioned(
    client: falcon.testing.TestClient,
) -> None:
    versioned = client.simulate_get("/static/css/app.css", params={"v": __version__})
    assert versioned.status_code == 200
    assert "immutable" in versioned.headers["cache-control"]
    assert ":root" in versioned.text
    plain = client.simulate_get("/static/css/app.css")
    assert plain.headers["cache-control"] == "no-cache"


def test_static_route_refuses_traversal(client: falcon.testing.TestClient) -> None:
    for path in ("/static/../templates/base.html", "/static/%2e%2e/templates/base.html"):
        result = client.simulate_get(path)
        assert result.status_code == 404
        assert "{% block" not in result.text


def test_healthz_reports_ok_without_writing(
    client: falcon.testing.TestClient, engine: Engine
) -> None:
    statements: list[str] = []
    requests_thread = threading.get_ident()

    def record(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if threading.get_ident() == requests_thread:  # not a background flusher's writes
            statements.append(statement.strip().split()[0].upper())

    event.listen(engine, "before_cursor_execute", record)
    try:
        result = client.simulate_get("/healthz")
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert result.status_code == 200
    assert result.json == {
        "status": "ok",
        "version": __version__,
        "database": "ok",
        "schema": "current",
    }
    assert statements, "the health check must query the database"
    assert not set(statements) & {"INSERT", "UPDATE", "DELETE", "CREATE", "ALTER", "DROP"}


def test_healthz_is_503_when_schema_needs_migration(backend: str, tmp_path: Path) -> None:
    url = create_database(backend, tmp_path)
    try:
        from alertstation.db import make_engine

        engine = make_engine(url)
        app = create_app(make_settings(tmp_path, url), engine=engine)
        result = falcon.testing.TestClient(app).simulate_get("/healthz")
        assert result.status_code == 503
        assert result.json["schema"] == "needs migration"
        engine.dispose()
    finally:
        drop_database(url)


def test_healthz_is_503_when_database_unreachable(tmp_path: Path) -> None:
    url = "postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=1"
    from alertstation.db import make_engine

    engine = make_engine(url, pool_pre_ping=False)
    app = create_app(make_settings(tmp_path, "sqlite:///" + str(tmp_path / "x.db")), engine=engine)
    result = falcon.testing.TestClient(app).simulate_get("/healthz")
    assert result.status_code == 503
    assert result.json["database"] == "unreachable"
