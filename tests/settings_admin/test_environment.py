"""Saved environment variables: validation, redaction, precedence and the config.updated row."""

from __future__ import annotations

import json
import re
import stat
import struct
from pathlib import Path

import pytest
from sqlalchemy import select

from alertstation.audit.tables import audit_logs
from alertstation.errors import Invalid
from alertstation.settings import (
    ENV_FILE,
    Settings,
    SettingsError,
    read_env_file,
    warn_skipped_variables,
)
from alertstation.settings_admin.service import save_variables
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
    station.add_user("ops", "admin")
    ops = station.sign_in("ops")
    result = ops.request(
        "PUT",
        "/api/environment/variables",
        json={"variables": {"SESSION_LIFETIME_HOURS": "8", "DATABASE_URL": SECRET_URL}},
    )
    assert result.status_code == 200, result.text
    assert result.json["changed"] == ["DATABASE_URL", "SESSION_LIFETIME_HOURS"]
    assert result.json["restart_required"] is True
    assert [w["name"] for w in result.json["warnings"]] == ["DATABASE_URL"]
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
    assert json.loads(row.details) == {
        "fields": ["DATABASE_URL", "SESSION_LIFETIME_HOURS"],
        "trust_boundary": ["DATABASE_URL"],
    }

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
        {"WX_ZONE_DBF_PATH": "/nonexistent/zones.dbf"},
        {"ALERTSTATION_MAX_REQUEST_BYTES": "100"},
        {"SESSION_LIFETIME_HOURS": "8", "DATABASE_URL": "mysql://x/y"},
        {"SESSION_LIFETIME_HOURS": 8},
    ],
)
def test_bad_values_change_nothing(station: Station, variables: dict) -> None:  # type: ignore[type-arg]
    station.add_user("ops", "admin")
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


BOUNDARY_VALUES = {
    "ALERTSTATION_TRUSTED_PROXIES": "0.0.0.0/0",
    "DATABASE_URL": SECRET_URL,
    "ALERTSTATION_IPAWS_TRUST_ANCHORS": "/etc/ssl/certs/ca-certificates.crt",
    "ALERTSTATION_RECEIVER_ALLOWLIST": "/usr/bin/rtl_fm",
}


@pytest.mark.parametrize("name", sorted(BOUNDARY_VALUES))
def test_an_operator_may_not_move_a_trust_boundary(station: Station, name: str) -> None:
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    for value in (BOUNDARY_VALUES[name], None):  # neither setting nor removing it
        refused = ops.request(
            "PUT",
            "/api/environment/variables",
            json={"variables": {"ALERTSTATION_LOG_LEVEL": "DEBUG", name: value}},
        )
        assert refused.status_code == 403, refused.text
        error = refused.json["error"]
        assert error["code"] == "admin_only_variable"
        assert name in error["message"] and "only an admin" in error["message"]
        assert error["details"]["variables"] == [name]
    assert not (station.app.station.settings.data_dir / ENV_FILE).exists()
    with station.engine.connect() as conn:
        actions = conn.execute(select(audit_logs.c.action)).scalars().all()
    assert "config.updated" not in actions
    # Other variables stay the operator's to change.
    allowed = ops.request(
        "PUT", "/api/environment/variables", json={"variables": {"ALERTSTATION_LOG_LEVEL": "DEBUG"}}
    )
    assert allowed.status_code == 200 and allowed.json["warnings"] == []


def test_an_admin_saves_trust_boundaries_with_a_warning_and_a_named_audit_row(
    station: Station, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ALERTSTATION_TRUSTED_PROXIES", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    changes = {
        "ALERTSTATION_TRUSTED_PROXIES": "10.0.0.0/8",
        "DATABASE_URL": SECRET_URL,
        "ALERTSTATION_LOG_FORMAT": "text",
    }
    result = boss.request("PUT", "/api/environment/variables", json={"variables": changes})
    assert result.status_code == 200, result.text
    warnings = {w["name"]: w["message"] for w in result.json["warnings"]}
    assert sorted(warnings) == ["ALERTSTATION_TRUSTED_PROXIES", "DATABASE_URL"]
    for name, message in warnings.items():
        assert message.startswith(f"{name} takes effect after restart; moves a trust boundary")
    assert "hunter2" not in result.text
    with station.engine.connect() as conn:
        (row,) = conn.execute(select(audit_logs).where(audit_logs.c.action == "config.updated"))
    assert row.username == "boss"
    details = json.loads(row.details)
    assert details["trust_boundary"] == ["ALERTSTATION_TRUSTED_PROXIES", "DATABASE_URL"]
    assert "hunter2" not in row.details and "10.0.0.0" not in row.details


def test_the_page_shows_boundary_variables_read_only_to_operators(station: Station) -> None:
    station.add_user("ops", "operator")
    station.add_user("boss", "admin")

    def inputs(page: str) -> dict[str, str]:
        tags = re.findall(r'<input id="var-([A-Z_]+)"([^>]*)>', page, re.S)
        assert tags
        return dict(tags)

    ops_page = station.sign_in("ops").request("GET", "/admin/environment").text
    ops_inputs = inputs(ops_page)
    for name in BOUNDARY_VALUES:
        assert "disabled" in ops_inputs[name], name
    assert "disabled" not in ops_inputs["ALERTSTATION_LOG_LEVEL"]
    assert ops_page.count("takes effect after restart; moves a trust boundary") == len(
        BOUNDARY_VALUES
    )
    boss_inputs = inputs(station.sign_in("boss").request("GET", "/admin/environment").text)
    assert not any("disabled" in tag for tag in boss_inputs.values())


def _dbf(path: Path, columns: list[str]) -> Path:
    """Write a DBF with one empty record and the given character columns."""
    fields = b"".join(
        name.encode().ljust(11, b"\0") + b"C" + b"\0" * 4 + bytes([8, 0]) + b"\0" * 14
        for name in columns
    )
    header_length = 32 + len(fields) + 1
    record_length = 1 + 8 * len(columns)
    head = bytes([3, 125, 1, 1]) + struct.pack("<IHH", 1, header_length, record_length)
    path.write_bytes(head + b"\0" * 20 + fields + b"\r" + b" " * record_length + b"\x1a")
    return path


def test_a_zone_dbf_path_must_hold_a_known_zone_schema(tmp_path: Path) -> None:
    unknown = _dbf(tmp_path / "zones.dbf", ["COLOUR", "SHAPE"])
    with pytest.raises(Invalid, match="Unrecognised zone DBF schema"):
        save_variables(tmp_path, {"WX_ZONE_DBF_PATH": str(unknown)})
    known = _dbf(tmp_path / "other.dbf", ["STATE", "ZONE", "NAME"])
    assert save_variables(tmp_path, {"WX_ZONE_DBF_PATH": str(known)}) == ["WX_ZONE_DBF_PATH"]


def test_a_saved_variable_that_cannot_start_is_named_and_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ENV_FILE).write_text(
        "ALERTSTATION_MAX_REQUEST_BYTES=100\nWX_ZONE_DBF_PATH=/gone/zones.dbf\n"
        "ALERTSTATION_LOG_LEVEL=DEBUG\n"
    )
    settings = Settings.from_env({"ALERTSTATION_DATA_DIR": str(tmp_path)})
    assert settings.max_request_bytes == 1 << 20 and settings.wx_zone_dbf_path is None
    assert settings.log_level == "DEBUG", "the usable ones still apply"
    with caplog.at_level("WARNING", logger="alertstation.settings"):
        warn_skipped_variables(settings)
    warned = [record.getMessage() for record in caplog.records]
    assert [line.split()[0] for line in warned] == [
        "ALERTSTATION_MAX_REQUEST_BYTES",
        "WX_ZONE_DBF_PATH",
    ]
    assert all("starting without it" in line for line in warned)
    (tmp_path / ENV_FILE).write_text("DATABASE_URL=mysql://x/y\n")
    with pytest.raises(SettingsError, match="DATABASE_URL"):
        Settings.from_env({"ALERTSTATION_DATA_DIR": str(tmp_path)})


def test_every_bad_variable_is_named_beside_its_field(tmp_path: Path) -> None:
    changes = {"ALERTSTATION_LOG_LEVEL": "LOUD", "ALERTSTATION_RECEIVER_ALLOWLIST": "bin/rx"}
    with pytest.raises(Invalid) as caught:
        save_variables(tmp_path, changes, is_admin=True)
    errors = caught.value.details["errors"]
    assert [error["field"] for error in errors] == list(changes)
    assert errors[1]["message"].startswith("ALERTSTATION_RECEIVER_ALLOWLIST: 'bin/rx' is not")
    assert caught.value.details["field"] == "ALERTSTATION_LOG_LEVEL"
    assert not (tmp_path / ENV_FILE).exists()
