"""The station time zone: an application setting, used by pages, the weekly test and upgrades."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from alembic import command
from sqlalchemy import inspect, select, text

from alertstation.audit.ledger import AuditLedger
from alertstation.audit.tables import audit_logs
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import alembic_config
from alertstation.eas.forward import rwt
from alertstation.http.templates import local_time
from alertstation.settings_admin import sections as store
from tests.support import StationHarness as Station

BEFORE = "20261129_traffic_asn_counters"
REVISION = "20261129_station_time_zone"
LEDGER_KEY = "a test ledger key of enough length for the audit chain"
# "2026-11-28 22:21 EST (03:21 UTC)" or, across midnight UTC, "(2026-11-29 03:21 UTC)".
LOCAL_WITH_UTC = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d E[SD]T \((\d{4}-\d\d-\d\d )?\d\d:\d\d UTC\)"
)


def _admin(station: Station) -> Any:
    station.add_user("ops", "admin")
    return station.sign_in("ops")


def _config_rows(station: Station) -> list[Any]:
    with station.engine.connect() as conn:
        query = select(audit_logs).where(audit_logs.c.action == "config.updated")
        return list(conn.execute(query.order_by(audit_logs.c.id)))


def test_local_time_shows_station_time_with_utc_beside_it() -> None:
    eastern = ZoneInfo("America/New_York")
    moment = datetime(2026, 11, 29, 3, 21, tzinfo=UTC)
    assert local_time(moment, eastern) == "2026-11-28 22:21 EST (2026-11-29 03:21 UTC)"
    assert local_time(moment.replace(hour=15), eastern) == "2026-11-29 10:21 EST (15:21 UTC)"
    assert local_time("2026-07-01T15:21:00+00:00", eastern) == "2026-07-01 11:21 EDT (15:21 UTC)"
    assert local_time(moment.replace(tzinfo=None)) == "2026-11-29 03:21 UTC"  # naive is UTC
    assert local_time(moment, ZoneInfo("America/Sao_Paulo")).endswith("UTC-03 (03:21 UTC)")
    assert local_time(None) == "" and local_time("not a time") == "not a time"


def test_the_time_zone_is_saved_audited_and_checked(station: Station) -> None:
    ops = _admin(station)
    shown = ops.request("GET", "/api/settings").json["sections"]["application"]
    assert shown["time_zone"] == "UTC"  # the default
    saved = ops.request("PUT", "/api/settings/application", json={"time_zone": "America/Chicago"})
    assert saved.status_code == 200, saved.text
    assert saved.json["changed"] == ["time_zone"]
    (row,) = _config_rows(station)
    assert row.target == "settings.application"
    assert json.loads(row.details) == {
        "fields": ["time_zone"],
        "changes": {"time_zone": {"old": "UTC", "new": "America/Chicago"}},
    }
    with station.engine.connect() as conn:
        assert store.station_time_zone(conn) == ZoneInfo("America/Chicago")
    for bad in ("Mars/Olympus", "../../etc/passwd", "", 5, "America/Chicago/../Denver"):
        refused = ops.request("PUT", "/api/settings/application", json={"time_zone": bad})
        assert refused.status_code == 422, bad
        assert refused.json["error"]["details"]["field"] == "time_zone"
    with station.engine.connect() as conn:
        assert store.station_time_zone(conn).key == "America/Chicago"


def test_pages_show_station_time_and_the_api_keeps_utc(station: Station) -> None:
    ops = _admin(station)
    ops.request("PUT", "/api/settings/application", json={"time_zone": "America/New_York"})
    page = ops.request("GET", "/logs", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert LOCAL_WITH_UTC.search(page.text), page.text[:2000]
    settings_page = ops.request("GET", "/admin/settings", headers={"Accept": "text/html"})
    assert 'value="America/New_York"' in settings_page.text
    shown = ops.request("GET", "/api/settings").json["sections"]["application"]
    assert shown["updated_at"].endswith("+00:00")


def test_the_weekly_test_follows_the_station_time_zone(station: Station) -> None:
    ops = _admin(station)
    ops.request("PUT", "/api/settings/application", json={"time_zone": "America/Chicago"})
    view = ops.request("GET", "/admin/eas/rwt").json
    assert view["schedule"]["time_zone"] == "America/Chicago"
    saved = ops.request(
        "PUT",
        "/admin/eas/rwt",
        json={"enabled": True, "weekday": 2, "time_of_day": "11:00", "location_codes": "039137"},
    )
    assert saved.status_code == 200, saved.text
    following = datetime.fromisoformat(saved.json["next_slot"])
    local = following.astimezone(ZoneInfo("America/Chicago"))
    assert (local.weekday(), local.hour, local.minute) == (2, 11, 0)
    refused = ops.request("PUT", "/admin/eas/rwt", json={"time_zone": "America/Denver"})
    assert refused.status_code == 422
    assert refused.json["error"]["details"]["field"] == "time_zone"
    assert "application settings" in refused.json["error"]["message"]


def test_a_new_station_zone_never_airs_a_past_weekly_test(station: Station) -> None:
    now = station.clock()
    with begin_write(station.engine) as conn:
        # A slot ten minutes ago in Tokyo time: the schedule saved now counts it as done.
        slot_local = (now - timedelta(minutes=10)).astimezone(ZoneInfo("Asia/Tokyo"))
        store.save(conn, store.APPLICATION, {"time_zone": "UTC"}, updated_by="ops", now=now)
        rwt.save_schedule(
            conn,
            {
                "enabled": True,
                "weekday": slot_local.weekday(),
                "time_of_day": slot_local.strftime("%H:%M"),
                "location_codes": "039137",
            },
            by="ops",
            now=now,
        )
    ops = _admin(station)
    saved = ops.request("PUT", "/api/settings/application", json={"time_zone": "Asia/Tokyo"})
    assert saved.status_code == 200, saved.text
    with station.engine.connect() as conn:
        schedule, last = rwt.get_schedule(conn)
    assert schedule.time_zone == "Asia/Tokyo"
    assert last is not None and last >= rwt.slot_at_or_before(schedule, now)
    assert rwt.run_schedule(station) == "waiting"


def test_upgrading_makes_the_weekly_test_zone_the_station_zone(empty_database: str) -> None:
    engine = make_engine(empty_database)
    config = alembic_config(engine)
    try:
        command.upgrade(config, BEFORE)
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO eas_rwt_schedule (id, enabled, weekday, time_of_day, time_zone, "
                    "location_codes, station_id, voice_text) VALUES "
                    "(1, true, 2, '11:00', 'America/Denver', '039137', 'ALRTSTN', '')"
                )
            )
        command.upgrade(config, REVISION)
        columns = {c["name"] for c in inspect(engine).get_columns("eas_rwt_schedule")}
        assert "time_zone" not in columns
        with engine.connect() as conn:
            assert store.station_time_zone(conn).key == "America/Denver"
            assert rwt.get_schedule(conn)[0].time_zone == "America/Denver"
        ledger = AuditLedger(LEDGER_KEY)
        with begin_write(engine) as conn:
            assert store.record_moved_time_zone(conn, ledger) == "America/Denver"
        with begin_write(engine) as conn:
            assert store.record_moved_time_zone(conn, ledger) is None  # recorded once
        with engine.connect() as conn:
            (row,) = conn.execute(select(audit_logs)).all()
            assert ledger.verify(conn).ok
            assert store.station_time_zone(conn).key == "America/Denver"
        assert (row.action, row.target, row.username) == (
            "config.updated",
            "settings.application",
            "migration",
        )
        assert json.loads(row.details) == {
            "fields": ["time_zone"],
            "moved_from": "weekly_test_schedule",
            "time_zone": "America/Denver",
        }
        command.downgrade(config, BEFORE)
        with engine.connect() as conn:
            zone = conn.execute(text("SELECT time_zone FROM eas_rwt_schedule")).scalar_one()
        assert zone == "America/Denver"
    finally:
        engine.dispose()


@pytest.mark.parametrize("zone", ["UTC", None])
def test_upgrading_a_station_without_a_zoned_schedule_moves_nothing(
    empty_database: str, zone: str | None
) -> None:
    engine = make_engine(empty_database)
    config = alembic_config(engine)
    try:
        command.upgrade(config, BEFORE)
        if zone is not None:
            with engine.begin() as conn:
                conn.execute(
                    text(
                        "INSERT INTO eas_rwt_schedule (id, enabled, weekday, time_of_day, "
                        "time_zone, location_codes, station_id, voice_text) VALUES "
                        "(1, false, 2, '11:00', :zone, '', 'ALRTSTN', '')"
                    ),
                    {"zone": zone},
                )
        command.upgrade(config, REVISION)
        with begin_write(engine) as conn:
            moved = store.record_moved_time_zone(conn, AuditLedger(LEDGER_KEY))
            assert store.station_time_zone(conn).key == "UTC"
        assert moved == ("UTC" if zone else None)
    finally:
        engine.dispose()


def test_alertstation_migrate_records_the_move(empty_database: str, tmp_path: Any) -> None:
    engine = make_engine(empty_database)
    try:
        command.upgrade(alembic_config(engine), BEFORE)
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO eas_rwt_schedule (id, enabled, weekday, time_of_day, time_zone, "
                    "location_codes, station_id, voice_text) VALUES "
                    "(1, false, 2, '11:00', 'Pacific/Honolulu', '', 'ALRTSTN', '')"
                )
            )
        env = {
            **os.environ,
            "DATABASE_URL": empty_database,
            "ALERTSTATION_DATA_DIR": str(tmp_path / "data"),
            "AUDIT_LEDGER_KEY": LEDGER_KEY,
            "ALERTSTATION_LOG_FORMAT": "text",
        }
        done = subprocess.run(
            [sys.executable, "-m", "alertstation", "migrate"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        assert "time zone Pacific/Honolulu is now the station time zone" in done.stdout
        with engine.connect() as conn:
            (row,) = conn.execute(select(audit_logs)).all()
            assert store.station_time_zone(conn).key == "Pacific/Honolulu"
        assert json.loads(row.details)["moved_from"] == "weekly_test_schedule"
    finally:
        engine.dispose()
