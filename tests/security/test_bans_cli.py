"""``alertstation bans list`` and ``bans remove ADDRESS`` (finding 6)."""

from __future__ import annotations

import json
import time

import pytest
from sqlalchemy import Engine, select

from alertstation.audit.tables import audit_logs
from alertstation.cli import main
from alertstation.db.generations import read_generation
from alertstation.security.bans.tables import BANS_GENERATION
from alertstation.security.hostban import service as hostban_service
from tests.support import StationHarness as Station

BANNED = "203.0.113.77"


@pytest.fixture
def station_env(station: Station, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the command line at the test station's database, keys and data directory."""
    settings = station.app.station.settings
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("SECRET_KEY", settings.secret_key)
    monkeypatch.setenv("AUDIT_LEDGER_KEY", settings.audit_ledger_key)


def ban_by_probes(station: Station, address: str) -> None:
    for _ in range(3):
        last = station.client.simulate_get("/.env", remote_addr=address)
    assert last.status_code == 403


def wait_status(station: Station, address: str, status: int) -> int:
    """The gate re-checks the generation about once a second: wait (60 s at most) for it."""
    deadline = time.monotonic() + 60
    seen = station.client.simulate_get("/healthz", remote_addr=address).status_code
    while seen != status and time.monotonic() < deadline:
        time.sleep(0.1)
        seen = station.client.simulate_get("/healthz", remote_addr=address).status_code
    return seen


@pytest.mark.usefixtures("station_env")
def test_list_then_remove_goes_through_the_web_unban_path(
    station: Station,
    engine: Engine,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert main(["bans", "list"]) == 0
    assert "no addresses are banned" in capsys.readouterr().out
    ban_by_probes(station, BANNED)
    assert main(["bans", "list"]) == 0
    listed = capsys.readouterr().out
    assert BANNED in listed and "malicious_request" in listed and "banned" in listed

    mirrored: list[object] = []
    real_mirror = hostban_service.mirror_change
    monkeypatch.setattr(
        hostban_service,
        "mirror_change",
        lambda station: mirrored.append(station) or real_mirror(station),
    )
    with engine.connect() as conn:
        before = read_generation(conn, BANS_GENERATION)
    assert main(["bans", "remove", BANNED]) == 0
    assert f"removed {BANNED}" in capsys.readouterr().out
    with engine.connect() as conn:
        assert read_generation(conn, BANS_GENERATION) == before + 1
        row = conn.execute(select(audit_logs).where(audit_logs.c.action == "ban.deleted")).one()
    assert (row.username, row.target) == ("cli", BANNED)
    assert json.loads(row.details)["source"] == "malicious_request"
    assert len(mirrored) == 1, "the host firewall mirror step ran"
    assert wait_status(station, BANNED, 200) == 200
    assert main(["bans", "list"]) == 0
    assert BANNED not in capsys.readouterr().out


@pytest.mark.usefixtures("station_env")
def test_remove_refuses_unknown_and_malformed_addresses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bans", "remove", "192.0.2.200"]) == 1
    assert "192.0.2.200 is not on the ban list" in capsys.readouterr().err
    assert main(["bans", "remove", "not-an-address"]) == 2
    assert "not an address" in capsys.readouterr().err
