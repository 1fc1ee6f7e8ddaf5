"""Saved environment variables: validation, redaction, precedence and the config.updated row."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from sqlalchemy import select

from alertstation.audit.tables import audit_logs
from alertstation.settings import ENV_FILE, Settings, read_env_file
from tests.support import StationHarness as Station

SECRET_URL = "postgresql://station:hunter2-secret@db.example/station"


def _variables(browser) -> dict:  # type: ignore[no-untyped-def]
    result = browser.request("GET", "/api/environment/variables")
    assert result.status_code == 200
    return {v["name"]: v for v in result.json["variables"]}


def test_save_records_names_only_and_redacts_secrets(
    station: Station, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SESSION_LIFETIME_HOURS", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    result = ops.request(
        "PUT",
        "/api/environment/variables",
        json={"variables": {"SESSION_LIFETIME_HOURS": "8", "DATABASE_URL": SECRET_URL}},
    )
    assert result.status_code == 200, result.text
    assert result.json == {
        "changed": ["DATABASE_URL", "SESSION_LIFETIME_HOURS"],
        "restart_required": True,
    }
    data_dir = station.app.station.settings.data_dir
    path = data_dir / ENV_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_env_file(path) == {"SESSION_LIFETIME_HOURS": "8", "DATABASE_URL": SECRET_URL}

    listing = _variables(ops)
    assert listing["SESSION_LIFETIME_HOURS"]["value"] == "8"
    assert listing["SESSION_LIFETIME_HOURS"]["source"] == "saved"
    assert listing["DATABASE_URL"]["value"] is None and listing["DATABASE_URL"]["is_set"]
    assert "hunter2" not in ops.request("GET", "/api/environment/variables").text
    assert "hunter2" not in ops.request("GET", "/admin/environment").text

    with station.engine.connect() as conn:
        (row,) = conn.execute(select(audit_logs).where(audit_logs.c.action == "config.updated"))
    assert row.target == "environment" and row.username == "ops"
    assert "hunter2" not in row.details and "8" not in row.details
    assert "DATABASE_URL" in row.details and "SESSION_LIFETIME_HOURS" in row.details

    removed = ops.request(
        "PUT", "/api/environment/variables", json={"variables": {"DATABASE_URL": None}}
    )
    assert removed.json["changed"] == ["DATABASE_URL"]
    assert read_env_file(path) == {"SESSION_LIFETIME_HOURS": "8"}


@pytest.mark.parametrize(
    "variables",
    [
        {"SESSION_LIFETIME_HOURS": "forever"},
        {"SECRET_KEY": "x" * 40},
        {"ALERTSTATION_DATA_DIR": "/tmp"},
        {"ALERTSTATION_TRUSTED_PROXIES": "10.0.0.300"},
        {"ALERTSTATION_LOG_LEVEL": "LOUD"},
        {"WX_ZONE_DBF_PATH": "a\nb"},
        {"SESSION_LIFETIME_HOURS": "8", "DATABASE_URL": "mysql://x/y"},
        {"SESSION_LIFETIME_HOURS": 8},
    ],
)
def test_bad_values_change_nothing(station: Station, variables: dict) -> None:  # type: ignore[type-arg]
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    result = ops.request("PUT", "/api/environment/variables", json={"variables": variables})
    assert result.status_code == 422
    assert not (station.app.station.settings.data_dir / ENV_FILE).exists()
    with station.engine.connect() as conn:
        actions = conn.execute(select(audit_logs.c.action)).scalars().all()
    assert "config.updated" not in actions


def test_viewer_reads_but_cannot_save(station: Station) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    assert viewer.request("GET", "/api/environment/variables").status_code == 200
    refused = viewer.request(
        "PUT", "/api/environment/variables", json={"variables": {"ALERTSTATION_LOG_LEVEL": "DEBUG"}}
    )
    assert refused.status_code == 403


def test_saved_values_apply_at_start_and_the_environment_wins(tmp_path: Path) -> None:
    (tmp_path / ENV_FILE).write_text(
        "# comment\nSESSION_LIFETIME_HOURS=6\nALERTSTATION_LOG_LEVEL=DEBUG\nSECRET_KEY=ignored\n"
    )
    settings = Settings.from_env({"ALERTSTATION_DATA_DIR": str(tmp_path)})
    assert settings.session_lifetime_hours == 6
    assert settings.log_level == "DEBUG"
    assert settings.secret_key != "ignored"
    overridden = Settings.from_env(
        {"ALERTSTATION_DATA_DIR": str(tmp_path), "SESSION_LIFETIME_HOURS": "2"}
    )
    assert overridden.session_lifetime_hours == 2
