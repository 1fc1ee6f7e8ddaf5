"""``alertstation zones sync`` and ``zones ensure`` as an operator runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from alertstation.cli import build_parser
from alertstation.db import make_engine
from alertstation.zones.service import count_zones
from tests.zones.zonefiles import LAND, MARINE, copy_shared, require_shared_data, write_dbf


def station_dir(tmp_path: Path) -> Path:
    """Return an existing data directory (commands refuse one that does not exist)."""
    path = tmp_path / "data"
    path.mkdir(exist_ok=True)
    return path


def zones(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "WX_ZONE_DBF_PATH"}
    return subprocess.run(
        [sys.executable, "-m", "alertstation", *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def cli_env(empty_database: str, tmp_path: Path) -> dict[str, str]:
    require_shared_data()
    return {
        "DATABASE_URL": empty_database,
        "ALERTSTATION_DATA_DIR": str(station_dir(tmp_path)),
        "ALERTSTATION_ASSETS_DIR": str(tmp_path / "assets"),
        "ALERTSTATION_LOG_FORMAT": "text",
    }


@pytest.mark.parametrize("command", [["zones"], ["zones", "sync"], ["zones", "ensure"]])
def test_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([*command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: alertstation zones" in capsys.readouterr().out


def test_commands_refuse_an_unmigrated_database(cli_env: dict[str, str]) -> None:
    for command in (["zones", "sync"], ["zones", "ensure"]):
        result = zones(command, cli_env)
        assert result.returncode == 1
        assert "run `alertstation migrate` first" in result.stderr


def test_ensure_seeds_then_has_nothing_to_do(cli_env: dict[str, str], tmp_path: Path) -> None:
    assert zones(["migrate"], cli_env).returncode == 0
    empty = zones(["zones", "ensure"], cli_env)
    assert empty.returncode == 0 and "nothing to do" in empty.stdout
    assets = tmp_path / "assets"
    assets.mkdir()
    copy_shared(LAND, assets / "z_18mr25.dbf")
    copy_shared(MARINE, assets / "mz20fe25.dbf")
    first = zones(["zones", "ensure"], cli_env)
    assert first.returncode == 0, first.stderr
    assert "public: 4026 zones (88 extra part(s) of multi-part zones merged) from z_18mr25.dbf" in (
        first.stdout
    )
    assert "marine: 565 zones from mz20fe25.dbf" in first.stdout
    assert "reading z_18mr25.dbf [" in first.stderr and "4114/4114 records" in first.stderr
    again = zones(["zones", "ensure"], cli_env)
    assert again.returncode == 0 and "up to date; nothing to do" in again.stdout


def test_sync_applies_given_files_and_refuses_bad_ones(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    assert zones(["migrate"], cli_env).returncode == 0
    nothing = zones(["zones", "sync"], cli_env)
    assert nothing.returncode == 1 and "no zone DBF files" in nothing.stderr

    result = zones(["zones", "sync", "--dbf-path", str(MARINE)], cli_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "marine: 565 zones from mz20fe25.dbf"

    foreign = write_dbf(tmp_path / "fz_01ja26.dbf", [("FOO", "C", 3, 0)], [{"FOO": "x"}])
    bad = zones(["zones", "sync", "--dbf-path", str(LAND), "--dbf-path", str(foreign)], cli_env)
    assert bad.returncode == 2
    message = [line for line in bad.stderr.splitlines() if line.startswith("alertstation:")]
    assert message == [
        "alertstation: error: Unrecognised zone DBF schema in fz_01ja26.dbf: columns found: FOO; "
        "expected STATE, ZONE, NAME (public or fire-weather) or ID, NAME (marine)"
    ]
    engine = make_engine(cli_env["DATABASE_URL"])
    try:
        with engine.connect() as conn:
            assert (count_zones(conn, "public"), count_zones(conn, "marine")) == (0, 565)
    finally:
        engine.dispose()
