"""Alert routes over HTTP on both backends: the public API, the admin actions, the pages."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, event, select

from alertstation.alerts.broadcast import BroadcastState
from alertstation.alerts.ingest import import_messages
from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.store import GENERATION
from alertstation.alerts.tables import cap_alerts
from alertstation.audit.tables import audit_logs
from alertstation.db import read_generation
from alertstation.db.engine import begin_write
from tests.support import StationHarness

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
NEW = "cap12_svr_new.xml"
CAN = "cap12_svr_can.xml"
NEW_ID = "urn:oid:2.49.0.1.840.0.4c1a5f0e2b7d9a3c61e8f04b2d97a5c3e10b6f28.001.1"
LIFTED = "2025-05-14T22:52:00+00:00"


def fixture(name: str, day: str | None = None, tag: str = "") -> bytes:
    """Return a sample message, moved from 2025-05-14 to ``day`` and re-identified by ``tag``.

    The VTEC dates move too, so a moved message starts a chain of its own; ``tag`` replaces
    the ``.001.1`` ending of every identifier in the file (its own and those it references).
    """
    data = (FIXTURES / name).read_bytes()
    if day:
        data = data.replace(b"2025-05-14", day.encode())
        data = data.replace(b"250514T", (day[2:4] + day[5:7] + day[8:10] + "T").encode())
    return data.replace(b".001.1", tag.encode()) if tag else data


def store(station: StationHarness, name: str, day: str | None = None, tag: str = "") -> None:
    """Import one sample message at the station's clock."""
    data = fixture(name, day, tag)
    results = import_messages(station.engine, data, name, now=station.clock())
    assert all(getattr(r, "outcome", "") == "stored" for r in results), results


@pytest.fixture(autouse=True)
def noon_today(station: StationHarness) -> None:
    """Put the clock at 12:00 UTC of the real date (never more than 12 hours from now)."""
    station.clock.now = station.clock.now.replace(hour=12, minute=0, second=0)


def today(station: StationHarness) -> str:
    """Return the clock's date: sample alerts moved there are active at 12:00 UTC."""
    return station.clock().date().isoformat()


def alert_id(engine: Engine, identifier: str = NEW_ID) -> int:
    with engine.connect() as conn:
        return conn.execute(
            select(cap_alerts.c.id).where(cap_alerts.c.identifier == identifier)
        ).scalar_one()


def audit_rows(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        return list(conn.execute(select(audit_logs).order_by(audit_logs.c.id)).all())


def generation(engine: Engine) -> int:
    with engine.connect() as conn:
        return read_generation(conn, GENERATION)


def admin(station: StationHarness) -> Any:
    station.add_user("chief", "admin")
    return station.sign_in("chief")


# --- GET /api/alerts ------------------------------------------------------------------------


def test_api_lists_active_alerts_publicly_with_their_fields(station: StationHarness) -> None:
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    store(station, NEW, today(station))
    result = station.client.simulate_get("/api/alerts")
    assert result.status_code == 200
    assert result.json["total"] == 1
    (alert,) = result.json["alerts"]
    assert alert["identifier"] == NEW_ID
    assert alert["sender"] == "w-nws.webmaster@noaa.gov"
    assert alert["event"] == "Severe Thunderstorm Warning"
    assert alert["event_code"] == "SVR"
    assert alert["state"] == "active" and alert["cancelled_at"] is None
    assert alert["in_area"] is True
    assert set(alert["codes"]) == {"040017", "040109", "OKC017", "OKC109"}
    assert alert["expires"].startswith(today(station) + "T23:00:00")
    for key in ("sent", "headline", "area_desc"):
        assert alert[key]


def test_api_filters_and_pages(station: StationHarness) -> None:
    store(station, NEW, today(station))
    store(station, NEW, tag=".002.1")  # on its 2025 date: expired by now

    def total(query: str) -> int:
        result = station.client.simulate_get("/api/alerts", query_string=query)
        assert result.status_code == 200, result.text
        return int(result.json["total"])

    assert total("") == 1
    assert total("status=all") == 2
    assert total("status=expired") == 1
    assert total("code=okc109") == 1
    assert total("code=040109") == 1
    assert total("code=040999") == 0
    assert total("event=SVR") == 1
    assert total("event=severe%20thunderstorm%20warning") == 1
    assert total("event=TOR") == 0
    assert total("since=2099-01-01T00:00:00Z") == 0
    assert total("since=2026-01-01") == 1
    assert total("status=all&since=2020-01-01") == 2
    assert total("status=all&code=OKC109&event=SVR") == 2
    paged = station.client.simulate_get("/api/alerts", query_string="status=all&limit=1&offset=1")
    assert paged.json["total"] == 2 and paged.json["limit"] == 1
    assert [a["state"] for a in paged.json["alerts"]] == ["expired"]


@pytest.mark.parametrize(
    ("query", "field"),
    [("status=gone", "status"), ("code=XYZ", "code"), ("since=yesterday", "since")],
)
def test_api_refuses_bad_filters(station: StationHarness, query: str, field: str) -> None:
    result = station.client.simulate_get("/api/alerts", query_string=query)
    assert result.status_code == 422
    assert field in result.text


def test_new_then_can_leaves_no_active_alert_and_a_lift_time(station: StationHarness) -> None:
    store(station, NEW)
    store(station, CAN)
    assert station.client.simulate_get("/api/alerts").json["total"] == 0
    cancelled = station.client.simulate_get("/api/alerts", query_string="status=cancelled").json
    assert cancelled["total"] == 1 and cancelled["alerts"][0]["cancelled_at"] == LIFTED
    # The CAN names OKC109 only: the NEW keeps OKC017 until it expires (the samples are old).
    every = station.client.simulate_get("/api/alerts", query_string="status=all").json
    original = next(a for a in every["alerts"] if a["identifier"] == NEW_ID)
    assert original["state"] == "expired" and original["cancelled_at"] is None
    assert original["codes"] == ["040017", "040109", "OKC017", "OKC109"]  # document order
    assert original["remaining_codes"] == []


# --- broadcast state and system status -------------------------------------------------------


def test_broadcast_state_follows_the_generation(station: StationHarness) -> None:
    first = station.client.simulate_get("/api/broadcast/state")
    assert first.status_code == 200
    assert first.json["active"] is False and first.json["active_alerts"] == 0
    datetime.fromisoformat(first.json["timestamp"])
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["OKC109"])
    store(station, NEW, today(station))
    time.sleep(1.05)  # the generation is checked at most once a second
    after = station.client.simulate_get("/api/broadcast/state").json
    assert after["active"] is True
    assert after["active_alerts"] == 1 and after["in_area_alerts"] == 1
    assert after["timestamp"] != first.json["timestamp"] or after["generation"] > 0
    # Past its expiry the alert stops counting even before the sweep runs.
    station.clock.advance(hours=12)
    late = station.client.simulate_get("/api/broadcast/state").json
    assert late["active"] is False and late["active_alerts"] == 0
    # The counts are kept between expiries, never past one: a clock set back counts it again.
    station.clock.advance(hours=-12)
    again = station.client.simulate_get("/api/broadcast/state").json
    assert again["active"] is True and again["active_alerts"] == 1


def test_broadcast_state_asks_the_database_at_most_once_a_second(engine: Engine) -> None:
    state = BroadcastState(engine, check_interval=60)
    state.state()
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", count)
    try:
        for _ in range(20):
            state.state()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert statements == []


def test_broadcast_is_active_while_a_message_airs(engine: Engine) -> None:
    class Airing:
        active = True

    state = BroadcastState(engine, airing=Airing())
    assert state.state()["active"] is True and state.state()["airing"] is True
    Airing.active = False
    assert state.state()["active"] is False


def test_system_status_is_public_and_free_of_secrets(station: StationHarness) -> None:
    store(station, NEW, today(station))
    result = station.client.simulate_get("/api/system_status")
    assert result.status_code == 200
    body = result.json
    assert body["database"] == "ok" and body["schema"] == "current"
    assert body["active_alerts"] == 1
    assert body["zone_catalog_size"] == 0  # the test database holds no zone catalog
    assert body["worker_heartbeat"] is None  # no worker ever led this database
    settings = station.app.station.settings
    text = result.text
    for secret in (settings.secret_key, settings.audit_ledger_key, str(settings.database_url)):
        assert secret not in text


# --- administration --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/admin/mark_expired"),
        ("POST", "/admin/clear_expired"),
        ("PATCH", "/admin/alerts/1"),
        ("DELETE", "/admin/alerts/1"),
    ],
)
def test_admin_actions_need_system_configure(
    station: StationHarness, method: str, path: str
) -> None:
    assert station.client.simulate_request(method, path).status_code == 401
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    assert viewer.request(method, path, json={}).status_code == 403


def test_mark_expired_runs_the_sweep_audited(station: StationHarness) -> None:
    chief = admin(station)
    store(station, NEW, today(station))
    nothing = chief.request("POST", "/admin/mark_expired")
    assert nothing.status_code == 200 and nothing.json == {"expired": 0}
    before = generation(station.engine)
    station.clock.advance(hours=12)
    result = chief.request("POST", "/admin/mark_expired")
    assert result.json == {"expired": 1}
    assert generation(station.engine) == before + 1
    rows = [r for r in audit_rows(station.engine) if r.action == "config.updated"]
    assert [orjson.loads(r.details)["fields"] for r in rows] == [[], ["state"]]
    assert rows[-1].target == "alerts.mark_expired" and rows[-1].username == "chief"
    listed = station.client.simulate_get("/api/alerts", query_string="status=expired")
    assert listed.json["total"] == 1


def test_clear_expired_deletes_old_ended_alerts(station: StationHarness) -> None:
    chief = admin(station)
    store(station, NEW)
    store(station, CAN)
    store(station, NEW, today(station), tag=".002.1")
    kept = chief.request("POST", "/admin/clear_expired")
    assert kept.status_code == 200 and kept.json == {"deleted": 0, "days": 30}
    station.clock.advance(days=31)
    chief = station.sign_in("chief")  # the first session has lapsed meanwhile
    assert chief.request("POST", "/admin/clear_expired", json={"days": "x"}).status_code == 422
    before = generation(station.engine)
    done = chief.request("POST", "/admin/clear_expired", json={"days": 30})
    assert done.json == {"deleted": 2, "days": 30}
    assert generation(station.engine) == before + 1
    left = station.client.simulate_get("/api/alerts", query_string="status=all").json
    assert [a["state"] for a in left["alerts"]] == ["active"]  # past expiry, not yet swept
    row = audit_rows(station.engine)[-1]
    assert row.action == "config.updated" and row.target == "alerts.clear_expired"
    assert orjson.loads(row.details)["fields"] == ["alerts"]


def test_patch_changes_expiry_and_ends_an_alert_audited(station: StationHarness) -> None:
    chief = admin(station)
    store(station, NEW, today(station))
    target = alert_id(station.engine)
    path = f"/admin/alerts/{target}"
    assert chief.request("PATCH", path, json={"colour": "red"}).status_code == 422
    assert chief.request("PATCH", path, json={"state": "active"}).status_code == 422
    assert chief.request("PATCH", path, json={}).status_code == 422
    assert (
        chief.request("PATCH", "/admin/alerts/999999", json={"state": "expired"}).status_code == 404
    )
    later = (station.clock() + timedelta(hours=20)).isoformat()
    moved = chief.request("PATCH", path, json={"expires": later})
    assert moved.status_code == 200 and moved.json["state"] == "active"
    assert datetime.fromisoformat(moved.json["expires"]) == datetime.fromisoformat(later)
    past = chief.request("PATCH", path, json={"expires": "2020-01-01T00:00:00Z"})
    assert past.json["state"] == "expired"
    assert orjson.loads(audit_rows(station.engine)[-1].details)["fields"] == ["expires", "state"]
    before = generation(station.engine)
    ended = chief.request("PATCH", path, json={"state": "cancelled", "reason": "sent in error"})
    assert ended.json["state"] == "cancelled"
    assert datetime.fromisoformat(ended.json["cancelled_at"]) == station.clock()
    assert generation(station.engine) == before + 1
    row = audit_rows(station.engine)[-1]
    assert row.action == "config.updated" and row.target == f"alert:{target}"
    details = orjson.loads(row.details)
    assert details["fields"] == ["cancelled_at", "state"]
    assert details["reason"] == "sent in error"


def test_delete_is_audited_first_and_fails_closed(
    station: StationHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    chief = admin(station)
    store(station, NEW, today(station))
    target = alert_id(station.engine)
    ledger = station.app.station.ledger

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("ledger is down")

    with monkeypatch.context() as patched:
        patched.setattr(ledger, "record", broken)
        refused = chief.request("DELETE", f"/admin/alerts/{target}")
    assert refused.status_code == 500 and refused.json["error"]["code"] == "audit_failed"
    assert station.client.simulate_get("/api/alerts").json["total"] == 1
    before = generation(station.engine)
    done = chief.request("DELETE", f"/admin/alerts/{target}")
    assert done.status_code == 200 and done.json == {"deleted": [target]}
    assert generation(station.engine) == before + 1
    assert station.client.simulate_get("/api/alerts", query_string="status=all").json["total"] == 0
    row = audit_rows(station.engine)[-1]
    assert row.action == "alert.deleted" and row.target == f"cap_alert:{target}"
    assert chief.request("DELETE", f"/admin/alerts/{target}").status_code == 404


# --- pages -----------------------------------------------------------------------------------


def test_pages_need_sign_in(station: StationHarness) -> None:
    for path in ("/alerts", "/alerts/history", "/alerts/1"):
        assert station.client.simulate_get(path).status_code != 200


def test_active_page_lists_alerts_or_says_there_are_none(station: StationHarness) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    empty = viewer.request("GET", "/alerts", csrf=False)
    assert empty.status_code == 200 and "No active alerts" in empty.text
    assert 'href="/alerts" aria-current="page"' in empty.text
    store(station, NEW, today(station))
    listed = viewer.request("GET", "/alerts", csrf=False)
    assert "Severe Thunderstorm Warning" in listed.text and "<script>" not in listed.text


def test_history_filters_and_detail_badges(station: StationHarness) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    store(station, NEW)
    store(station, CAN)
    history = viewer.request("GET", "/alerts/history", query_string="status=cancelled", csrf=False)
    assert history.status_code == 200 and "1 alert" in history.text
    none = viewer.request("GET", "/alerts/history", query_string="code=TXC001", csrf=False)
    assert "No stored alert matches" in none.text
    paged = viewer.request("GET", "/alerts/history", query_string="limit=1", csrf=False)
    assert 'rel="next"' in paged.text and 'rel="prev"' not in paged.text
    bad = viewer.request("GET", "/alerts/history", query_string="status=nope", csrf=False)
    assert bad.status_code == 422
    detail = viewer.request("GET", f"/alerts/{alert_id(station.engine)}", csrf=False)
    assert detail.status_code == 200
    assert "EXPIRED" in detail.text  # OKC017 was never cancelled: the NEW ran to its end
    assert "/O.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z/" in detail.text
    assert "OKC109" in detail.text and "040109" in detail.text
    assert "<details" in detail.text and "&lt;alert xmlns" in detail.text
    assert viewer.request("GET", "/alerts/999999", csrf=False).status_code == 404


def test_a_manual_message_on_the_air_makes_the_broadcast_active(station) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from alertstation.eas.airing.onair import run_once
    from alertstation.eas.archive import AiredMessage
    from tests.eas.airing_support import queue_message

    quiet = station.client.simulate_get("/api/broadcast/state").json
    assert quiet["active"] is False and quiet["airing"] is False
    silence = AiredMessage("ZCZC-EAS-RWT-051059+0015-3251200-WXYZ/FM -", np.zeros(800, "<i2"), 8000)
    queue_message(station.app.station, silence)  # queued until the worker airs it
    on_air = station.client.simulate_get("/api/broadcast/state").json
    assert on_air["active"] is True and on_air["airing"] is True
    assert on_air["active_alerts"] == 0
    # Queued is not on the air; and with no real output it never is (archived only).
    assert on_air["on_air"] is False and on_air["now_airing"] is None
    assert run_once(station.app.station)
    assert station.client.simulate_get("/api/broadcast/state").json["active"] is False
