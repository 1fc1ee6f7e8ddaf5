"""Helpers for tests: databases on both backends and settings that skip the environment."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from alertstation.app import StationApp
from alertstation.auth.service import create_user
from alertstation.auth.sessions import COOKIE_NAME
from alertstation.db.engine import begin_write
from alertstation.schema import metadata
from alertstation.settings import Settings
from alertstation.traffic.settings import settings_cache_for

BACKENDS = ("sqlite", "postgresql")
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def pg_required() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("ALERTSTATION_REQUIRE_PG"))


def _pg_base_url() -> str:
    url = os.environ.get("ALERTSTATION_TEST_PG_URL")
    if url:
        return url
    if pg_required():
        pytest.fail("PostgreSQL is required: run the suite through `make test`")
    pytest.skip("PostgreSQL not available; `make test` starts a throwaway cluster")


def create_database(backend: str, folder: Path) -> str:
    """Create an empty database on ``backend`` and return its URL."""
    if backend == "sqlite":
        return f"sqlite:///{folder / f'station-{secrets.token_hex(4)}.db'}"
    base = make_url(_pg_base_url())
    name = f"alertstation_test_{secrets.token_hex(6)}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    """Remove a database made by create_database (PostgreSQL only; SQLite files go with tmp)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
    admin.dispose()


def clear_tables(engine: Engine) -> None:
    """Delete every row of every table (for tests that commit through the app), and forget the
    traffic settings this process cached for ``engine`` (the next test starts from defaults,
    not from what the cache read within its last second)."""
    with engine.begin() as connection:
        for table in reversed(metadata.sorted_tables):
            connection.execute(table.delete())
    settings_cache_for(engine).clear()


def make_settings(tmp_path: Path, database_url: str, **overrides: object) -> Settings:
    """Build Settings for a test without reading the environment."""
    values: dict[str, object] = {
        "data_dir": tmp_path / "data",
        "database_url": database_url,
        "secret_key": secrets.token_urlsafe(48),
        "audit_ledger_key": secrets.token_urlsafe(48),
        "assets_dir": tmp_path / "assets",
    }
    values.update(overrides)
    Path(values["data_dir"]).mkdir(parents=True, exist_ok=True)  # type: ignore[arg-type]
    return Settings(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class FakeUser:
    """A signed-in user for tests that exercise access rules without sessions."""

    id: int
    username: str
    role: str


class HeaderIdentity:
    """Test-only identity middleware: the X-Test-Role header names the caller's role."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        name = req.get_header("X-Test-Role")
        req.context.user = FakeUser(id=0, username=f"test-{name}", role=name) if name else None


class Clock:
    """A controllable UTC clock for the station (``create_app(..., clock=clock)``).

    It starts from the real time, on the whole minute (as SAME issue times are), so anything
    in a test that reads the real clock beside it (another app, a daemon, a signed cookie) agrees
    with it on any date.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime.now(UTC).replace(second=0, microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        """Move the clock forward, e.g. ``advance(seconds=61)``."""
        self.now += timedelta(**delta)


PASSWORD = "correct horse battery staple"


@dataclass
class SignedIn:
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
class StationHarness:
    """The real app (sessions included) with a controllable clock, and helpers to sign in."""

    app: StationApp
    client: falcon.testing.TestClient
    clock: Clock
    engine: Engine

    def add_user(self, username: str, role: str, password: str = PASSWORD) -> int:
        with begin_write(self.engine) as conn:
            return create_user(conn, username=username, role=role, password=password).id

    def sign_in(
        self, username: str, password: str = PASSWORD, remote_addr: str = "127.0.0.1", **kw: Any
    ) -> SignedIn:
        result = self.client.simulate_post(
            "/auth/login",
            json={"username": username, "password": password},
            remote_addr=remote_addr,
            **kw,
        )
        assert result.status_code == 200, result.text
        cookie = result.cookies[COOKIE_NAME].value
        return SignedIn(self.client, cookie, result.json["csrf_token"], result.json["user"])


def run_without_kernel(kernel: str, code: str, *, require: bool) -> Any:
    """Run ``code`` in a fresh interpreter where ``alertstation._native.<kernel>`` cannot load.

    With ``require`` the interpreter gets ALERTSTATION_REQUIRE_NATIVE=1, so importing the
    kernel's wrapper must fail; without it the wrapper falls back to its reference code.
    """
    import subprocess
    import sys

    script = f"import sys; sys.modules['alertstation._native.{kernel}'] = None\n{code}"
    env = {k: v for k, v in os.environ.items() if k != "ALERTSTATION_REQUIRE_NATIVE"}
    if require:
        env["ALERTSTATION_REQUIRE_NATIVE"] = "1"
    return subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
