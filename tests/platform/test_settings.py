"""Settings from the environment."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from alertstation.settings import Settings, SettingsError, normalise_database_url


def test_defaults(tmp_path: Path) -> None:
    settings = Settings.from_env({"ALERTSTATION_DATA_DIR": str(tmp_path / "d")})
    assert settings.data_dir == (tmp_path / "d").resolve()
    assert settings.database_url == f"sqlite:///{settings.data_dir / 'alertstation.db'}"
    assert settings.is_sqlite
    assert settings.session_lifetime_hours == 12.0
    assert settings.wx_zone_dbf_path is None
    assert [str(n) for n in settings.trusted_proxies] == ["127.0.0.0/8", "::1/128"]


def test_secret_key_is_generated_once_privately(tmp_path: Path) -> None:
    env = {"ALERTSTATION_DATA_DIR": str(tmp_path)}
    first = Settings.from_env(env).secret_key
    assert len(first) >= 32
    assert Settings.from_env(env).secret_key == first
    mode = stat.S_IMODE(os.stat(tmp_path / "secret_key").st_mode)
    assert mode == 0o600
    assert Settings.from_env({**env, "SECRET_KEY": "k" * 40}).secret_key == "k" * 40
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit_ledger_key", "secret_key"]
    ledger = Settings.from_env(env).audit_ledger_key
    assert len(ledger) >= 32 and ledger != first


def test_short_secret_key_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret_key").write_text("short\n")
    with pytest.raises(SettingsError, match="key shorter than 32"):
        Settings.from_env({"ALERTSTATION_DATA_DIR": str(tmp_path)})


def test_spec_names_are_read(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "ALERTSTATION_DATA_DIR": str(tmp_path),
            "SESSION_LIFETIME_HOURS": "1.5",
            "WX_ZONE_DBF_PATH": str(tmp_path / "z.dbf"),
            "DATABASE_URL": "postgresql://u:p@db/station",
            "ALERTSTATION_TRUSTED_PROXIES": "10.0.0.0/8, fd00::/8",
            "ALERTSTATION_CONTACT": " ops@station.example ",
        }
    )
    assert settings.contact == "ops@station.example"
    assert settings.session_lifetime_hours == 1.5
    assert settings.wx_zone_dbf_path == (tmp_path / "z.dbf").resolve()
    assert settings.database_url == "postgresql+psycopg://u:p@db/station"
    assert not settings.is_sqlite
    assert [str(n) for n in settings.trusted_proxies] == ["10.0.0.0/8", "fd00::/8"]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SESSION_LIFETIME_HOURS", "soon", "must be a number"),
        ("SESSION_LIFETIME_HOURS", "-1", "greater than zero"),
        ("ALERTSTATION_TRUSTED_PROXIES", "10.0.0.300", "ALERTSTATION_TRUSTED_PROXIES"),
        ("ALERTSTATION_LOG_LEVEL", "loud", "must be one of"),
        ("DATABASE_URL", "mysql://x/y", "not supported"),
        ("ALERTSTATION_CONTACT", "ops@station.example\r\nX-Injected: 1", "ALERTSTATION_CONTACT"),
        ("ALERTSTATION_CONTACT", "x" * 201, "at most 200"),
    ],
)
def test_bad_values_are_refused_with_the_variable_named(
    tmp_path: Path, name: str, value: str, message: str
) -> None:
    with pytest.raises(SettingsError, match=message):
        Settings.from_env({"ALERTSTATION_DATA_DIR": str(tmp_path), name: value})


def test_database_url_normalisation() -> None:
    assert normalise_database_url("postgres://a/b") == "postgresql+psycopg://a/b"
    assert normalise_database_url("sqlite:///x.db") == "sqlite:///x.db"
