"""The alertstation command, run as an operator would run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from alertstation.auth.passwords import verify_password
from alertstation.auth.tables import users
from alertstation.cli import main
from alertstation.db import make_engine
from alertstation.version import __version__

COMMANDS = (
    [],
    ["version"],
    ["migrate"],
    ["routes"],
    ["serve"],
    ["worker"],
    ["run"],
    ["user"],
    ["user", "create"],
    ["user", "ensure-admin"],
    ["user", "passwd"],
    ["user", "disable"],
    ["user", "enable"],
    ["user", "list"],
)


def alertstation(
    args: list[str], env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "alertstation", *args],
        env={**os.environ, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def cli_env(empty_database: str, tmp_path: Path) -> dict[str, str]:
    return {
        "DATABASE_URL": empty_database,
        "ALERTSTATION_DATA_DIR": str(tmp_path / "data"),
        "ALERTSTATION_LOG_FORMAT": "text",
    }


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "top")
def test_help_everywhere(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: alertstation" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        ["bogus"],
        ["serve", "--workers", "0"],
        ["serve", "--bind", "nowhere"],
        ["user", "create", "--username", "x"],
    ],
)
def test_bad_input_is_one_line_and_non_zero(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    stderr = capsys.readouterr().err
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert stderr.startswith("alertstation")


def test_version(tmp_path: Path) -> None:
    result = alertstation(["version"], {"ALERTSTATION_DATA_DIR": str(tmp_path)})
    assert result.stdout.strip() == f"alertstation {__version__}"
    assert __version__ == (Path(__file__).parents[2] / "VERSION").read_text().strip()


def test_migrate_twice_is_a_no_op(cli_env: dict[str, str]) -> None:
    first = alertstation(["migrate"], cli_env)
    assert first.returncode == 0, first.stderr
    assert "applied 1 migration(s)" in first.stdout or "applied" in first.stdout
    second = alertstation(["migrate"], cli_env)
    assert second.returncode == 0
    assert "nothing to do" in second.stdout
    check = alertstation(["migrate", "--check"], cli_env)
    assert check.returncode == 0 and "at head" in check.stdout


def test_commands_refuse_an_unmigrated_database(cli_env: dict[str, str]) -> None:
    result = alertstation(["user", "ensure-admin"], cli_env)
    assert result.returncode == 1
    assert "run `alertstation migrate` first" in result.stderr
    assert alertstation(["migrate", "--check"], cli_env).returncode == 1


def test_user_create_and_first_admin(cli_env: dict[str, str], empty_database: str) -> None:
    assert alertstation(["migrate"], cli_env).returncode == 0
    admin = alertstation(["user", "ensure-admin"], cli_env)
    assert admin.returncode == 0, admin.stderr
    generated = admin.stdout.split("Password (shown once, store it now): ")[1].split()[0]
    again = alertstation(["user", "ensure-admin"], cli_env)
    assert "already exists" in again.stdout and generated not in again.stdout

    created = alertstation(
        ["user", "create", "--username", "ops1", "--role", "operator", "--password-stdin"],
        cli_env,
        stdin="correct horse battery\n",
    )
    assert created.returncode == 0, created.stderr
    assert "correct horse" not in created.stdout
    duplicate = alertstation(["user", "create", "--username", "OPS1", "--role", "viewer"], cli_env)
    assert duplicate.returncode == 2 and "already taken" in duplicate.stderr
    bad_role = alertstation(["user", "create", "--username", "v1", "--role", "root"], cli_env)
    assert bad_role.returncode == 2 and "unknown role" in bad_role.stderr
    short = alertstation(
        ["user", "create", "--username", "v2", "--role", "viewer", "--password-stdin"],
        cli_env,
        stdin="short\n",
    )
    assert short.returncode == 2 and "at least 12" in short.stderr

    engine = make_engine(empty_database)
    with engine.connect() as conn:
        rows = {r.username: r for r in conn.execute(select(users))}
    engine.dispose()
    assert set(rows) == {"admin", "ops1"}
    assert rows["admin"].role == "admin"
    assert rows["admin"].password_hash.startswith("$argon2id$")
    assert verify_password(rows["admin"].password_hash, generated)
    assert verify_password(rows["ops1"].password_hash, "correct horse battery")


def test_routes_lists_every_route(tmp_path: Path) -> None:
    result = alertstation(["routes"], {"ALERTSTATION_DATA_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["METHOD", "PATH", "ACCESS", "SUMMARY"]
    assert any(line.split()[:3] == ["GET", "/healthz", "public"] for line in lines[1:])
    assert any(line.split()[:3] == ["GET", "/", "signed_in"] for line in lines[1:])
    as_json = alertstation(["routes", "--json"], {"ALERTSTATION_DATA_DIR": str(tmp_path)})
    assert {"method": "GET", "path": "/docs", "access": "public", "summary": "Documentation"} in (
        __import__("orjson").loads(as_json.stdout)
    )


def test_passwd_and_disable(cli_env: dict[str, str], empty_database: str) -> None:
    assert alertstation(["migrate"], cli_env).returncode == 0
    assert alertstation(["user", "ensure-admin"], cli_env).returncode == 0
    made = alertstation(["user", "create", "--username", "ops", "--role", "operator"], cli_env)
    assert made.returncode == 0
    changed = alertstation(
        ["user", "passwd", "--username", "ops", "--password-stdin"],
        cli_env,
        stdin="an entirely new secret\n",
    )
    assert changed.returncode == 0, changed.stderr
    assert "0 session(s) ended" in changed.stdout
    last_admin = alertstation(["user", "disable", "--username", "admin"], cli_env)
    assert last_admin.returncode == 2 and "last enabled admin" in last_admin.stderr
    disabled = alertstation(["user", "disable", "--username", "ops"], cli_env)
    assert disabled.returncode == 0 and "disabled" in disabled.stdout
    listing = alertstation(["user", "list"], cli_env).stdout.split("\n")
    assert any(line.split() == ["ops", "operator", "disabled"] for line in listing)
    unknown = alertstation(["user", "passwd", "--username", "ghost"], cli_env)
    assert unknown.returncode == 2 and "no user named 'ghost'" in unknown.stderr

    engine = make_engine(empty_database)
    with engine.connect() as conn:
        row = conn.execute(select(users).where(users.c.username == "ops")).one()
    engine.dispose()
    assert verify_password(row.password_hash, "an entirely new secret")
    assert row.is_active is False or row.is_active == 0


def test_a_missing_data_directory_is_refused_by_name_not_created(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "data"
    for command in (["user", "list"], ["migrate", "--check"], ["audit", "verify"]):
        result = alertstation(command, cli_env)
        assert result.returncode != 0, command
        assert f"the data directory {missing} does not exist" in result.stderr, command
        assert not missing.exists(), command
    # Commands that need neither the database nor the keys ignore it.
    wav = tmp_path / "rwt.wav"
    header = "ZCZC-WXR-RWT-039173+0030-1241720-KCLE/NWS-"
    encode = ["eas", "encode", "--header", header, "--attention-seconds", "0", "--out", str(wav)]
    for command in (["version"], ["routes"], encode, ["eas", "decode", str(wav)]):
        assert alertstation(command, cli_env).returncode == 0, command
        assert not missing.exists(), command
    # migrate makes a new station there; user list then has a header row.
    assert alertstation(["migrate"], cli_env).returncode == 0
    assert missing.is_dir()
    assert alertstation(["user", "ensure-admin"], cli_env).returncode == 0
    listed = alertstation(["user", "list"], cli_env)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["USERNAME", "ROLE", "STATE"]
    assert rows[0].split() == ["admin", "admin", "enabled"]


def test_user_ensure_admin_creates_the_data_directory(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    migrated = alertstation(["migrate"], {**cli_env, "ALERTSTATION_DATA_DIR": str(tmp_path / "m")})
    assert migrated.returncode == 0, migrated.stderr
    fresh = {**cli_env, "ALERTSTATION_DATA_DIR": str(tmp_path / "other")}
    result = alertstation(["user", "ensure-admin"], fresh)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "other").is_dir()
