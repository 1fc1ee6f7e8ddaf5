"""Shared fixtures: settings, databases on both backends, the app and its client.

Database tests take the ``engine`` or ``conn`` fixture and run once on SQLite and once on
PostgreSQL (ids ``[sqlite]`` / ``[postgresql]``). PostgreSQL comes from the throwaway cluster that
``make test`` starts (ALERTSTATION_TEST_PG_URL); under ``make test`` or CI a missing cluster fails
the run instead of skipping it.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import falcon.testing
import pytest
from sqlalchemy import Connection, Engine

from alertstation.app import StationApp, create_app
from alertstation.db import make_engine
from alertstation.db.migrate import upgrade_to_head
from alertstation.logs import BackgroundLineHandler
from alertstation.settings import Settings
from tests.processes import free_port
from tests.support import (
    BACKENDS,
    Clock,
    StationHarness,
    clear_tables,
    create_database,
    drop_database,
    make_settings,
    pg_required,
)


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Name the database backend under test."""
    return request.param


@pytest.fixture(scope="session")
def engine(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """A migrated database shared by the session's tests on one backend."""
    url = create_database(backend, tmp_path_factory.mktemp("db"))
    eng = make_engine(url)
    upgrade_to_head(eng)
    yield eng
    eng.dispose()
    drop_database(url)


@pytest.fixture
def dead_engine() -> Iterator[Engine]:
    """A PostgreSQL engine pointed at a loopback port nothing listens on: refused at once."""
    engine = make_engine(
        f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/postgres",
        connect_args={"connect_timeout": 10},
    )
    yield engine
    engine.dispose()


@pytest.fixture
def empty_database(backend: str, tmp_path: Path) -> Iterator[str]:
    """URL of a brand-new empty database on the backend under test."""
    url = create_database(backend, tmp_path)
    yield url
    drop_database(url)


@pytest.fixture
def conn(engine: Engine) -> Iterator[Connection]:
    """A connection inside a transaction that is rolled back after the test."""
    with engine.connect() as connection:
        transaction = connection.begin()
        try:
            yield connection
        finally:
            transaction.rollback()


@pytest.fixture
def settings(tmp_path: Path, engine: Engine) -> Settings:
    """Settings pointing at the test database and a private data directory."""
    return make_settings(tmp_path, engine.url.render_as_string(hide_password=False))


@pytest.fixture
def app(settings: Settings, engine: Engine) -> Iterator[StationApp]:
    """The station app on the test database; rows it commits are removed afterwards."""
    yield create_app(settings, engine=engine)
    clear_tables(engine)


@pytest.fixture
def client(app: StationApp) -> falcon.testing.TestClient:
    """A Falcon test client for ``app``."""
    return falcon.testing.TestClient(app)


# --- report which backends were exercised -------------------------------------------------

_BACKEND_ID = re.compile(r"\[(?:.*-)?(sqlite|postgresql)(?:-.*)?\]$")
_passed_by_backend: Counter[str] = Counter()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.passed:
        match = _BACKEND_ID.search(report.nodeid)
        if match:
            _passed_by_backend[match.group(1)] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    summary = ", ".join(f"{name}: {_passed_by_backend[name]} passed" for name in BACKENDS)
    terminalreporter.write_line(f"database backends exercised: {summary}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    collected_backend_tests = any(_BACKEND_ID.search(item.nodeid) for item in session.items)
    if pg_required() and collected_backend_tests and exitstatus == 0:
        if not _passed_by_backend["postgresql"]:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def station(tmp_path: Path, engine: Engine) -> Iterator[StationHarness]:
    """The real app with sessions on the test database and a controllable clock."""
    clock = Clock()
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    app = create_app(settings, engine=engine, clock=clock)
    try:
        yield StationHarness(app, falcon.testing.TestClient(app), clock, engine)
    finally:
        clear_tables(engine)


@pytest.fixture(autouse=True)
def _station_logging_restored() -> Iterator[None]:
    """Give each test the ``alertstation`` logger as it found it.

    A command run in a test (``configure_logging``) points the logger at that test's captured
    stderr, which pytest closes when the test ends; later tests would log to a closed file.
    """
    logger = logging.getLogger("alertstation")
    handlers, level, propagate = logger.handlers[:], logger.level, logger.propagate
    yield
    for added in logger.handlers:
        if added not in handlers and isinstance(added, BackgroundLineHandler):
            added.close()
    logger.handlers[:] = handlers
    logger.setLevel(level)
    logger.propagate = propagate
