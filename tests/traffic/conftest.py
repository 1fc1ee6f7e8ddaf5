"""Fixtures of the traffic tests: the station's recorder flushed on demand, and its rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, select

from alertstation.traffic import importer
from alertstation.traffic.recorder import flush_all
from alertstation.traffic.settings import settings_cache_for
from alertstation.traffic.tables import (
    traffic_analytics_settings,
    traffic_hostnames,
    traffic_visitors,
    web_request_day_groups,
    web_request_days,
    web_request_logs,
    web_request_rollups,
)
from tests.support import SignedIn
from tests.support import StationHarness as Station

VISITOR_IP = "203.0.113.7"


@pytest.fixture(params=["here", "child"])
def reading(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Read every file of an import in this process, or every file in a process of its own."""
    monkeypatch.setattr(importer, "PARALLEL_BYTES", 0 if request.param == "child" else 2**62)
    return str(request.param)


@pytest.fixture
def clean_log(engine: Engine) -> Iterator[None]:
    """Start each test on an empty request log (other apps' buffers written first), and leave
    the traffic settings at their defaults after it."""
    flush_all()
    empty(engine)
    settings_cache_for(engine).clear()  # the settings of the last test were cleared with it
    yield
    flush_all()
    empty(engine)
    with engine.begin() as conn:  # a test without a station (which clears every table) too
        conn.execute(traffic_analytics_settings.delete())
    settings_cache_for(engine).clear()


def empty(engine: Engine) -> None:
    """Delete the request log, its rollups and the visitor ids."""
    with engine.begin() as conn:
        for table in (
            web_request_logs,
            web_request_rollups,
            web_request_days,
            web_request_day_groups,
            traffic_visitors,
            traffic_hostnames,
        ):
            conn.execute(table.delete())


@pytest.fixture
def admin(station: Station) -> SignedIn:
    """An admin signed in (from loopback: not recorded by default)."""
    station.add_user("boss", "admin")
    return station.sign_in("boss")


@pytest.fixture
def logged(station: Station, engine: Engine, clean_log: None) -> Callable[[], list[dict[str, Any]]]:
    """Return a function that flushes the station's recorder and lists the rows in id order."""

    def rows() -> list[dict[str, Any]]:
        station.app.traffic.flush()
        with engine.connect() as conn:
            query = select(web_request_logs).order_by(web_request_logs.c.id)
            return [dict(row._mapping) for row in conn.execute(query)]

    return rows
