"""Automatic-ban settings: the route's access, validation and audit; storage; pruning; migration."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import Engine, func, select

from alertstation.audit.tables import audit_logs
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.generations import read_generation
from alertstation.db.migrate import alembic_config, upgrade_to_head
from alertstation.security.autoban import service as autoban_service
from alertstation.security.autoban.settings import (
    DEFAULT_RETENTION_DAYS,
    DEFAULT_RULES,
    DETECTORS,
    AutobanSettings,
    load_settings,
    save_settings,
)
from alertstation.security.autoban.tables import security_events
from alertstation.worker.jobs import JOBS
from tests.support import Clock, SignedIn
from tests.support import StationHarness as Station

PATH = "/admin/security/autoban"


@pytest.fixture
def operator(station: Station) -> SignedIn:
    station.add_user("op", "operator")
    return station.sign_in("op")


def config_rows(engine: Engine) -> list[Any]:
    query = select(audit_logs).where(audit_logs.c.action == "config.updated")
    with engine.connect() as conn:
        return list(conn.execute(query.order_by(audit_logs.c.id)))


def test_get_shows_the_defaults_and_needs_view_config(station: Station, operator: SignedIn) -> None:
    result = operator.request("GET", PATH)
    assert result.status_code == 200
    settings = result.json["settings"]
    assert settings["retention_days"] == DEFAULT_RETENTION_DAYS
    assert list(settings["detectors"]) == list(DETECTORS)
    flood = settings["detectors"]["flood"]
    assert flood == {"enabled": True, "threshold": 300, "window_seconds": 10, "ban_seconds": 3600}
    assert "paths" not in flood
    assert settings["detectors"]["stream_abuse"]["paths"] == list(
        DEFAULT_RULES["stream_abuse"].paths
    )
    assert result.json["labels"]["api_abuse"] == "API Abuse"
    station.add_user("eve", "viewer")
    assert station.sign_in("eve").request("GET", PATH).status_code == 200
    station.add_user("dee", "demo")
    assert station.sign_in("dee").request("GET", PATH).status_code == 403
    assert station.client.simulate_get(PATH).status_code == 401


def test_put_needs_configure_and_writes_config_updated(
    station: Station, operator: SignedIn, engine: Engine
) -> None:
    body = {
        "retention_days": 7,
        "detectors": {
            "flood": {"threshold": 500, "enabled": False},
            "stream_abuse": {"paths": ["/stream", "/live/*/audio"]},
            "login_brute_force": {"threshold": 10},  # the default: not a change
        },
    }
    station.add_user("eve", "viewer")
    assert station.sign_in("eve").request("PUT", PATH, json=body).status_code == 403
    assert station.client.simulate_put(PATH, json=body).status_code == 401
    assert config_rows(engine) == []

    result = operator.request("PUT", PATH, json=body)
    assert result.status_code == 200, result.text
    assert result.json["changed"] == [
        "flood.enabled",
        "flood.threshold",
        "retention_days",
        "stream_abuse.paths",
    ]
    [row] = config_rows(engine)
    assert row.target == "autoban" and row.username == "op"
    details = orjson.loads(row.details)
    assert details["fields"] == result.json["changed"]
    assert sorted(details["changes"]) == result.json["changed"]
    again = operator.request("GET", PATH).json["settings"]
    assert again["retention_days"] == 7
    assert again["detectors"]["flood"]["enabled"] is False
    assert again["detectors"]["flood"]["threshold"] == 500
    assert again["detectors"]["stream_abuse"]["paths"] == ["/stream", "/live/*/audio"]
    assert (
        again["detectors"]["login_brute_force"]
        == result.json["settings"]["detectors"]["login_brute_force"]
    )
    unchanged = operator.request("PUT", PATH, json={"retention_days": 7})
    assert unchanged.json["changed"] == []
    assert orjson.loads(config_rows(engine)[-1].details) == {"fields": []}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"retention_days": 0}, "retention_days"),
        ({"retention_days": "30"}, "retention_days"),
        ({"colour": "red"}, "colour"),
        ({"detectors": []}, "detectors"),
        ({"detectors": {"spam": {}}}, "detectors.spam"),
        ({"detectors": {"flood": 5}}, "detectors.flood"),
        ({"detectors": {"flood": {"threshold": 0}}}, "detectors.flood.threshold"),
        ({"detectors": {"flood": {"threshold": 100_001}}}, "detectors.flood.threshold"),
        ({"detectors": {"flood": {"threshold": True}}}, "detectors.flood.threshold"),
        ({"detectors": {"flood": {"window_seconds": 86_401}}}, "detectors.flood.window_seconds"),
        ({"detectors": {"flood": {"ban_seconds": 59}}}, "detectors.flood.ban_seconds"),
        ({"detectors": {"flood": {"ban_seconds": -1}}}, "detectors.flood.ban_seconds"),
        ({"detectors": {"flood": {"enabled": "yes"}}}, "detectors.flood.enabled"),
        ({"detectors": {"flood": {"paths": ["/x"]}}}, "detectors.flood.paths"),
        ({"detectors": {"api_abuse": {"paths": "/api/"}}}, "detectors.api_abuse.paths"),
        ({"detectors": {"api_abuse": {"paths": ["api"]}}}, "detectors.api_abuse.paths"),
        ({"detectors": {"api_abuse": {"paths": ["/a b"]}}}, "detectors.api_abuse.paths"),
        ({"detectors": {"api_abuse": {"paths": ["/a*/b"]}}}, "detectors.api_abuse.paths"),
        ({"detectors": {"api_abuse": {"paths": ["/x"] * 33}}}, "detectors.api_abuse.paths"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    operator: SignedIn, engine: Engine, body: dict[str, Any], field: str
) -> None:
    result = operator.request("PUT", PATH, json=body)
    assert result.status_code == 422, result.text
    assert result.json["error"]["code"] == "invalid"
    assert result.json["error"]["details"]["field"] == field
    assert config_rows(engine) == []
    with engine.connect() as conn:
        assert load_settings(conn) == AutobanSettings()


def test_a_body_that_is_not_json_is_refused(operator: SignedIn) -> None:
    result = operator.request("PUT", PATH, body="retention_days=3")
    assert result.status_code == 415


def test_permanent_bans_and_the_maxima_are_accepted(operator: SignedIn) -> None:
    body = {
        "retention_days": 3650,
        "detectors": {
            "malicious_request": {"ban_seconds": 0, "threshold": 1, "window_seconds": 86_400},
            "api_abuse": {"paths": []},
        },
    }
    result = operator.request("PUT", PATH, json=body)
    assert result.status_code == 200, result.text
    malicious = result.json["settings"]["detectors"]["malicious_request"]
    assert (malicious["ban_seconds"], malicious["threshold"]) == (0, 1)
    assert result.json["settings"]["detectors"]["api_abuse"]["paths"] == []


def test_saved_settings_round_trip_and_bump_the_generation(conn: sa.Connection) -> None:
    before = read_generation(conn, "autoban")
    saved, changed = save_settings(
        conn, {"detectors": {"api_abuse": {"threshold": 7, "paths": ["/api/", "/x"]}}}, Clock()()
    )
    assert changed == ["api_abuse.paths", "api_abuse.threshold"]
    assert read_generation(conn, "autoban") == before + 1
    assert load_settings(conn) == saved
    assert load_settings(conn).rule("api_abuse").paths == ("/api/", "/x")
    assert save_settings(conn, {}, Clock()())[1] == []
    assert read_generation(conn, "autoban") == before + 1, "no change, no bump"


# --- pruning --------------------------------------------------------------------------------


def _events(engine: Engine, ages_days: list[float], now: Any) -> None:
    with begin_write(engine) as conn:
        for age in ages_days:
            autoban_service.record_event(
                conn,
                address="192.0.2.1",
                kind="login_failure",
                now=now - timedelta(days=age),
                detail=f"{age}",
            )


def test_the_job_prunes_events_past_the_retention_in_batches(
    station: Station, operator: SignedIn, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = next(job for job in JOBS if job.name == "security-autoban")
    assert job.interval == 300.0
    now = station.clock()
    _events(engine, [40.0] * 7 + [31.0, 29.0, 1.5, 0.0], now)
    monkeypatch.setattr(autoban_service, "PRUNE_BATCH", 3)
    job.run(station.app.station)
    with engine.connect() as conn:
        left = sorted(
            float(detail) for detail in conn.execute(select(security_events.c.detail)).scalars()
        )
    assert left == [0.0, 1.5, 29.0]
    assert operator.request("PUT", PATH, json={"retention_days": 1}).status_code == 200
    job.run(station.app.station)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(security_events)).scalar() == 1


# --- migration ------------------------------------------------------------------------------


def test_the_migration_adds_and_removes_the_settings_tables(empty_database: str) -> None:
    engine = make_engine(empty_database)
    try:
        upgrade_to_head(engine)
        tables = set(sa.inspect(engine).get_table_names())
        assert {"security_events", "autoban_rules", "autoban_settings"} <= tables
        command.downgrade(alembic_config(engine), "20261123_eas_forward")
        tables = set(sa.inspect(engine).get_table_names())
        assert not {"security_events", "autoban_rules", "autoban_settings"} & tables
    finally:
        engine.dispose()
