"""Session life: sign-in rows, heartbeat throttling, idle expiry, sign-out and terminate."""

from __future__ import annotations

from sqlalchemy import select

from alertstation.auth.sessions import COOKIE_NAME
from alertstation.auth.tables import admin_sessions
from tests.support import StationHarness as Station


def _rows(station: Station) -> list:  # type: ignore[type-arg]
    with station.engine.connect() as conn:
        return list(conn.execute(select(admin_sessions).order_by(admin_sessions.c.id)))


def test_sign_in_creates_a_row_with_the_client_address(station: Station) -> None:
    station.add_user("ops", "operator")
    station.sign_in(
        "ops", remote_addr="127.0.0.1", headers={"X-Forwarded-For": "1.1.1.1, 203.0.113.9"}
    )
    station.sign_in("ops", remote_addr="198.51.100.4", headers={"X-Forwarded-For": "10.9.9.9"})
    rows = _rows(station)
    assert [row.source_ip for row in rows] == ["203.0.113.9", "198.51.100.4"]
    assert all(row.ended_at is None and row.last_seen_at == station.clock.now for row in rows)


def test_heartbeat_writes_at_most_once_per_minute(station: Station) -> None:
    station.add_user("ops", "operator")
    browser = station.sign_in("ops")
    signed_in_at = station.clock.now
    station.clock.advance(seconds=30)
    assert browser.request("GET", "/auth/session").status_code == 200
    assert _rows(station)[0].last_seen_at == signed_in_at, "no write within 60 s"
    station.clock.advance(seconds=31)
    assert browser.request("GET", "/auth/session").status_code == 200
    assert _rows(station)[0].last_seen_at == station.clock.now
    refreshed = station.clock.now
    station.clock.advance(seconds=59)
    browser.request("GET", "/auth/session")
    assert _rows(station)[0].last_seen_at == refreshed


def test_session_ends_after_its_lifetime_even_when_busy(station: Station) -> None:
    station.add_user("ops", "operator")
    browser = station.sign_in("ops")
    for _ in range(12):
        station.clock.advance(hours=1)
        assert browser.request("GET", "/auth/session").status_code == 200
    station.clock.advance(seconds=1)
    assert browser.request("GET", "/auth/session").status_code == 401
    assert _rows(station)[0].ended_reason == "expired"


def test_idle_session_expires_and_its_cookie_stops_working(station: Station) -> None:
    station.add_user("ops", "operator")
    browser = station.sign_in("ops")
    station.clock.advance(hours=12, seconds=1)
    result = browser.request("GET", "/auth/session")
    assert result.status_code == 401
    (row,) = _rows(station)
    assert row.ended_reason == "expired" and row.ended_at == station.clock.now


def test_heartbeat_sweeps_other_idle_rows(station: Station) -> None:
    station.add_user("ops", "operator")
    station.add_user("boss", "admin")
    station.sign_in("ops")  # goes idle
    station.clock.advance(hours=6)
    boss = station.sign_in("boss")
    station.clock.advance(hours=6, seconds=5)
    assert boss.request("GET", "/auth/session").status_code == 200  # heartbeat → sweep
    idle, active = _rows(station)
    assert idle.ended_reason == "expired"
    assert active.ended_at is None


def test_sessions_list_sweeps_first(station: Station) -> None:
    station.add_user("ops", "operator")
    station.add_user("boss", "admin")
    station.sign_in("ops")
    station.clock.advance(hours=6)
    boss = station.sign_in("boss")
    station.clock.advance(hours=6, seconds=1)
    listing = boss.request("GET", "/api/admin/sessions")
    assert listing.status_code == 200
    assert [s["username"] for s in listing.json["sessions"]] == ["boss"]
    assert listing.json["sessions"][0]["current"] is True
    everything = boss.request("GET", "/api/admin/sessions", params={"include_ended": "true"})
    ended = [s for s in everything.json["sessions"] if not s["active"]]
    assert [(s["username"], s["ended_reason"]) for s in ended] == [("ops", "expired")]


def test_sign_out_ends_the_row_and_the_cookie(station: Station) -> None:
    station.add_user("ops", "operator")
    browser = station.sign_in("ops")
    result = browser.request("POST", "/auth/logout")
    assert result.status_code == 200
    assert result.cookies[COOKIE_NAME].value == ""
    assert _rows(station)[0].ended_reason == "logout"
    assert browser.request("GET", "/auth/session").status_code == 401


def test_terminate_one_and_all_others(station: Station) -> None:
    station.add_user("boss", "admin")
    station.add_user("ops", "operator")
    boss = station.sign_in("boss")
    ops_a = station.sign_in("ops")
    ops_b = station.sign_in("ops")
    ops_c = station.sign_in("ops")
    rows = _rows(station)
    result = boss.request("POST", f"/api/admin/sessions/{rows[1].id}/terminate")
    assert result.status_code == 200
    assert ops_a.request("GET", "/auth/session").status_code == 401
    assert ops_b.request("GET", "/auth/session").status_code == 200
    again = boss.request("POST", f"/api/admin/sessions/{rows[1].id}/terminate")
    assert again.status_code == 404
    others = boss.request("POST", "/api/admin/sessions/terminate-others")
    assert others.json == {"ended": 2}
    assert ops_b.request("GET", "/auth/session").status_code == 401
    assert ops_c.request("GET", "/auth/session").status_code == 401
    assert boss.request("GET", "/auth/session").status_code == 200
    reasons = [row.ended_reason for row in _rows(station)]
    assert reasons == [None, "terminated", "terminated", "terminated"]


def test_operator_cannot_manage_sessions(station: Station) -> None:
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    assert ops.request("GET", "/api/admin/sessions").status_code == 403
    assert ops.request("POST", "/api/admin/sessions/terminate-others").status_code == 403


def test_disabling_a_user_ends_their_sessions(station: Station) -> None:
    station.add_user("boss", "admin")
    ops_id = station.add_user("ops", "operator")
    boss = station.sign_in("boss")
    ops = station.sign_in("ops")
    result = boss.request("PATCH", f"/admin/users/{ops_id}", json={"is_active": False})
    assert result.status_code == 200 and result.json["changed"] == ["is_active"]
    assert ops.request("GET", "/auth/session").status_code == 401
    assert _rows(station)[1].ended_reason == "user_disabled"
