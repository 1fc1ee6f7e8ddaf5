"""Which database errors are an outage, and how the web tier answers one (503 with Retry-After)."""

from __future__ import annotations

from pathlib import Path

import falcon
import falcon.testing
import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from alertstation.alerts.broadcast import BroadcastState
from alertstation.app import create_app
from alertstation.context import Station
from alertstation.db.engine import is_outage
from alertstation.errors import DatabaseUnavailable
from alertstation.http.routing import PUBLIC, Route
from tests.support import make_settings


def _error_of(engine: Engine, sql: str) -> SQLAlchemyError:
    with pytest.raises(SQLAlchemyError) as caught:
        with engine.connect() as conn:
            conn.execute(text(sql))
    return caught.value


def test_a_refused_postgresql_connection_is_an_outage(dead_engine: Engine) -> None:
    assert is_outage(_error_of(dead_engine, "SELECT 1"))


def test_sqlite_errors_are_not_outages(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    holder = create_engine(f"sqlite:///{path}")
    waiter = create_engine(f"sqlite:///{path}", connect_args={"timeout": 0})
    with holder.connect() as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
        conn.commit()
    with holder.connect() as conn:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        conn.exec_driver_sql("INSERT INTO t VALUES (1)")
        locked = _error_of(waiter, "INSERT INTO t VALUES (2)")
        conn.rollback()
    assert "locked" in str(locked)
    assert not is_outage(locked)
    assert not is_outage(_error_of(waiter, "SELEC nonsense"))
    holder.dispose()
    waiter.dispose()


def test_postgresql_query_errors_are_not_outages(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL statement errors")
    with pytest.raises(DBAPIError) as caught:
        with engine.connect() as conn:
            conn.execute(text("SET LOCAL statement_timeout = 1"))
            conn.execute(text("SELECT pg_sleep(5)"))
    assert getattr(caught.value.orig, "sqlstate", None) == "57014"  # query_canceled
    assert not is_outage(caught.value)
    assert not is_outage(_error_of(engine, "SELECT * FROM no_such_table"))


def test_other_errors_are_not_outages() -> None:
    assert not is_outage(ValueError("nope"))
    assert not is_outage(DatabaseUnavailable("already mapped"))


class Reads:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._engine.connect() as conn:
            resp.media = {"one": conn.execute(text("SELECT 1")).scalar()}


class BadQuery:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._engine.connect() as conn:
            conn.execute(text("SELECT * FROM no_such_table"))


@pytest.fixture
def client(tmp_path: Path, engine: Engine, dead_engine: Engine) -> falcon.testing.TestClient:
    def routes(station: Station) -> list[Route]:
        return [
            Route("GET", "/_db/down", Reads(dead_engine), PUBLIC),
            Route("GET", "/_db/bug", BadQuery(engine), PUBLIC),
            Route("GET", "/_db/broadcast", _BroadcastOn(dead_engine), PUBLIC),
        ]

    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    return falcon.testing.TestClient(create_app(settings, engine=engine, extra_routes=routes))


class _BroadcastOn:
    def __init__(self, engine: Engine) -> None:
        self._state = BroadcastState(engine)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._state.state()


def test_an_outage_is_503_database_unavailable_with_retry_after(
    client: falcon.testing.TestClient,
) -> None:
    result = client.simulate_get("/_db/down")
    assert result.status_code == 503
    assert result.json["error"]["code"] == "database_unavailable"
    assert int(result.headers["Retry-After"]) == DatabaseUnavailable.retry_after
    assert "postgres" not in result.text.lower()  # no driver text or address leaks


def test_a_broadcast_state_with_no_snapshot_yet_is_503(client: falcon.testing.TestClient) -> None:
    result = client.simulate_get("/_db/broadcast")
    assert result.status_code == 503
    assert result.json["error"]["code"] == "database_unavailable"


def test_a_query_bug_is_still_a_500(client: falcon.testing.TestClient) -> None:
    result = client.simulate_get("/_db/bug")
    assert result.status_code == 500
    assert result.json["error"]["code"] == "internal_error"
    assert "Retry-After" not in result.headers
