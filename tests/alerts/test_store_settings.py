"""Alert settings, re-matching the store from geocode ids, and ingest of the sample files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import Connection, Engine, select

from alertstation.alerts.airing_guard import refusal
from alertstation.alerts.codes import remaining_codes
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.ingest import ingest_alert
from alertstation.alerts.matching import GeocodeMatcher, encode_code
from alertstation.alerts.model import Alert
from alertstation.alerts.service import (
    AlertSettings,
    forward_queue,
    get_alert_settings,
    rematch_store,
    set_alert_settings,
)
from alertstation.alerts.store import Matchers
from alertstation.alerts.tables import cap_alert_geocodes, cap_alerts
from alertstation.db import read_generation
from alertstation.db.engine import begin_write
from alertstation.db.types import utcnow
from tests.support import clear_tables

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
NOW = datetime(2025, 5, 14, 22, 20, tzinfo=UTC)


def sample(name: str) -> Alert:
    (alert,) = parse_any((FIXTURES / name).read_bytes())
    assert isinstance(alert, Alert)
    return alert


def flags(conn: Connection) -> dict[str, tuple[bool, bool]]:
    rows = conn.execute(
        select(cap_alerts.c.identifier, cap_alerts.c.in_area, cap_alerts.c.stored_area)
    )
    return {r.identifier: (r.in_area, r.stored_area) for r in rows}


def test_settings_default_empty_and_round_trip(conn: Connection) -> None:
    assert get_alert_settings(conn) == AlertSettings()
    saved = set_alert_settings(
        conn, zone_codes=[" okc109 ", "040109"], forward_events=["tor", "SVR", "TOR"]
    )
    assert saved == AlertSettings(("OKC109", "040109"), (), ("TOR", "SVR"))
    assert get_alert_settings(conn) == saved
    set_alert_settings(conn, storage_zone_codes=["040000"])
    assert get_alert_settings(conn).zone_codes == ("OKC109", "040109")
    assert get_alert_settings(conn).storage_zone_codes == ("040000",)


@pytest.mark.parametrize(
    "kwargs",
    [{"zone_codes": ["12345"]}, {"zone_codes": "040109"}, {"forward_events": ["TORN"]}],
)
def test_invalid_settings_write_nothing(conn: Connection, kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        set_alert_settings(conn, **kwargs)  # type: ignore[arg-type]
    assert get_alert_settings(conn) == AlertSettings()


def test_geocodes_stored_as_ids_and_settings_change_rematches(conn: Connection) -> None:
    nowhere = Matchers(GeocodeMatcher([]), GeocodeMatcher([]))
    ingest_alert(conn, sample("cap12_svr_new.xml"), nowhere, explicit=True, now=NOW)
    ids = set(conn.execute(select(cap_alert_geocodes.c.code_id)).scalars())
    assert ids == {encode_code(c) for c in ("040017", "040109", "OKC017", "OKC109")}
    assert list(flags(conn).values()) == [(False, False)]
    before = read_generation(conn, "alerts")
    set_alert_settings(conn, storage_zone_codes=["040000"])
    assert list(flags(conn).values()) == [(False, True)]
    set_alert_settings(conn, zone_codes=["OKC017"])
    assert list(flags(conn).values()) == [(True, True)]
    assert read_generation(conn, "alerts") == before + 2
    set_alert_settings(conn, forward_events=["SVR"])  # no code change: no re-match
    assert read_generation(conn, "alerts") == before + 2
    assert rematch_store(conn, GeocodeMatcher(["OKC017"]), GeocodeMatcher(["040000"])) == 0
    assert rematch_store(conn, GeocodeMatcher(["006037"]), GeocodeMatcher([])) == 1
    assert list(flags(conn).values()) == [(False, False)]


def test_rematch_handles_alerts_without_geocodes(conn: Connection) -> None:
    matchers = Matchers(GeocodeMatcher([]), GeocodeMatcher([]))
    bare = Alert(identifier="bare", sender="s", sent=NOW)
    ingest_alert(conn, bare, matchers, explicit=True, now=NOW)
    ingest_alert(conn, sample("cap12_svr_new.xml"), matchers, explicit=True, now=NOW)
    assert rematch_store(conn, GeocodeMatcher(["040109"]), GeocodeMatcher([])) == 1
    rows = {r.identifier: r.in_area for r in conn.execute(select(cap_alerts))}
    assert rows.pop("bare") is False
    assert list(rows.values()) == [True]


def test_sample_chain_new_con_can(conn: Connection) -> None:
    matchers = AlertSettings(("040109",), (), ("SVR",)).matchers()
    new = ingest_alert(conn, sample("cap12_svr_new.xml"), matchers, now=NOW)
    assert (new.state, new.queued) == ("active", True)
    con = ingest_alert(conn, sample("cap12_svr_con.xml"), matchers, now=NOW)
    assert (con.state, con.queued) == ("active", False)
    can = ingest_alert(conn, sample("cap12_svr_can.xml"), matchers, now=NOW)
    assert (can.state, can.queued) == ("cancelled", False)
    rows = {r.id: r for r in conn.execute(select(cap_alerts)).all()}
    # The CON and the CAN name OKC109 only: the NEW stays active for OKC017, which is outside
    # the broadcast area, so the NEW has left the area and its forward waits only to be dropped.
    assert (rows[new.alert_id].state, rows[new.alert_id].in_area) == ("active", False)
    assert remaining_codes(conn, new.alert_id) == ["040017", "OKC017"]
    cancelled = rows[con.alert_id]
    assert cancelled.state == "cancelled"
    assert cancelled.cancelled_at == sample("cap12_svr_can.xml").sent
    assert cancelled.expires == sample("cap12_svr_con.xml").expires
    assert [(q.alert_id, q.state) for q in forward_queue(conn)] == [(new.alert_id, "pending")]
    reason = refusal(conn, new.alert_id, NOW, max_age_minutes=60, forward_events=["SVR"], now=NOW)
    assert reason.startswith("none of the broadcast area's codes remain in force")


def test_expiry_job_runs_every_minute_and_bumps_only_on_change(engine: Engine) -> None:
    from alertstation.worker.jobs import JOBS

    (job,) = [job for job in JOBS if job.name == "alert-expiry"]
    assert job.interval == 60.0
    station = SimpleNamespace(engine=engine)
    matchers = Matchers(GeocodeMatcher([]), GeocodeMatcher([]))
    try:
        with begin_write(engine) as conn:
            soon = Alert(identifier="a", sender="s", sent=utcnow(), expires=utcnow())
            later = Alert(identifier="b", sender="s", sent=NOW, expires=utcnow() + timedelta(1))
            for item in (soon, later):
                ingest_alert(conn, item, matchers, explicit=True, now=NOW)
            before = read_generation(conn, "alerts")
        job.run(station)  # type: ignore[arg-type]
        with engine.connect() as conn:
            assert read_generation(conn, "alerts") == before + 1
            rows = {r.identifier: r.state for r in conn.execute(select(cap_alerts))}
        assert rows == {"a": "expired", "b": "active"}
        job.run(station)  # type: ignore[arg-type]
        with engine.connect() as conn:
            assert read_generation(conn, "alerts") == before + 1
    finally:
        clear_tables(engine)
