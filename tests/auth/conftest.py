"""Fixtures for account and session tests: the real app with sessions and a controllable clock."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
from sqlalchemy import Engine

from alertstation.app import StationApp, create_app
from alertstation.auth.service import create_user
from alertstation.auth.sessions import COOKIE_NAME
from alertstation.db.engine import begin_write
from tests.support import Clock, clear_tables, make_settings

PASSWORD = "correct horse battery staple"


@dataclass
class Browser:
    """A signed-in client: sends the session cookie and, when asked, the CSRF token."""

    client: falcon.testing.TestClient
    cookie: str
    csrf: str
    user: dict[str, Any]

    def request(self, method: str, path: str, *, csrf: bool = True, **kwargs: Any) -> Any:
        headers = dict(kwargs.pop("headers", {}) or {})
        if csrf:
            headers["X-CSRF-Token"] = self.csrf
        return self.client.simulate_request(
            method, path, cookies={COOKIE_NAME: self.cookie}, headers=headers, **kwargs
        )


@dataclass
class Station:
    app: StationApp
    client: falcon.testing.TestClient
    clock: Clock
    engine: Engine

    def add_user(self, username: str, role: str, password: str = PASSWORD) -> int:
        with begin_write(self.engine) as conn:
            return create_user(conn, username=username, role=role, password=password).id

    def sign_in(
        self, username: str, password: str = PASSWORD, remote_addr: str = "127.0.0.1", **kw: Any
    ) -> Browser:
        result = self.client.simulate_post(
            "/auth/login",
            json={"username": username, "password": password},
            remote_addr=remote_addr,
            **kw,
        )
        assert result.status_code == 200, result.text
        cookie = result.cookies[COOKIE_NAME].value
        return Browser(self.client, cookie, result.json["csrf_token"], result.json["user"])


@pytest.fixture
def station(tmp_path: Path, engine: Engine) -> Iterator[Station]:
    clock = Clock()
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    app = create_app(settings, engine=engine, clock=clock)
    try:
        yield Station(app, falcon.testing.TestClient(app), clock, engine)
    finally:
        clear_tables(engine)
