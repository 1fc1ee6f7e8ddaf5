"""The audit exports reach back only as far as the saved export window (audit_export_days)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import falcon.testing
import pytest
from sqlalchemy import Engine

from alertstation.app import StationApp, create_app
from alertstation.audit.actor import Actor
from alertstation.audit.window import DEFAULT_EXPORT_DAYS, export_window_days
from alertstation.db import begin_write
from alertstation.settings_admin import sections
from tests.support import Clock, HeaderIdentity, make_settings

ADMIN = {"X-Test-Role": "admin"}


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(db: Engine, tmp_path: Path, clock: Clock) -> Iterator[StationApp]:
    settings = make_settings(tmp_path, db.url.render_as_string(hide_password=False))
    yield create_app(settings, engine=db, clock=clock, identity_middleware=[HeaderIdentity()])


def save_window(app: StationApp, days: int) -> None:
    with begin_write(app.station.engine) as conn:
        sections.save(
            conn,
            sections.APPLICATION,
            {"audit_export_days": days},
            updated_by="admin",
            now=app.station.clock(),
        )


def exported_actions(client: falcon.testing.TestClient) -> list[str]:
    result = client.simulate_get("/logs/export.csv", headers=ADMIN)
    assert result.status_code == 200, result.text
    return [row["action"] for row in csv.DictReader(io.StringIO(result.text))]


def test_the_csv_export_leaves_out_events_older_than_the_window(
    app: StationApp, clock: Clock
) -> None:
    client = falcon.testing.TestClient(app)
    with begin_write(app.station.engine) as conn:
        assert export_window_days(conn) == DEFAULT_EXPORT_DAYS == 365
        app.station.ledger.record(conn, Actor(1, "alice", "192.0.2.10", "ua"), "login success")
    clock.advance(days=20)  # the event is now 20 days old
    assert exported_actions(client) == ["login success"]
    save_window(app, 10)
    with app.station.engine.connect() as conn:
        assert export_window_days(conn) == 10
    assert "login success" not in exported_actions(client)
    pdf = client.simulate_get("/logs/export.pdf", headers=ADMIN)
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    save_window(app, 30)
    assert "login success" in exported_actions(client)
