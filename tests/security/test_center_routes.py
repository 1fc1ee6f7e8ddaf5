"""The Security Center over HTTP: overview numbers and their 24-hour edges, tab data, redirects,
who sees what. Failed sign-ins are real refused sign-ins (the ledger stamped with the station's
clock); security events are inserted directly (the detectors that write them are not tested here).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine

from alertstation.db.engine import begin_write
from alertstation.security.autoban.tables import security_events
from alertstation.security.center import service as cs
from alertstation.security.geoip.lookup import close_locators, slot_path
from alertstation.security.hostban import service as hs
from tests.security.conftest import ADMIN_IP
from tests.security.test_geoip_files import city_db
from tests.support import PASSWORD, SignedIn
from tests.support import StationHarness as Station

OVERVIEW = "/security/overview"
AGENT = "Mozilla/5.0 (X11; Linux x86_64) probe/1.0"


def z(moment: datetime) -> str:
    """Format a UTC time as the API does."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(autouse=True)
def ledger_on_station_clock(station: Station, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stamp audit rows with the station's clock, as they are in production (one clock).

    The clock starts on the current whole hour, so hour buckets fall where the tests expect.
    """
    station.clock.now = station.clock.now.replace(minute=0, second=0)
    monkeypatch.setattr("alertstation.audit.ledger.utcnow", station.clock)


@pytest.fixture(autouse=True)
def _close_readers() -> Iterator[None]:
    yield
    close_locators()


def at(station: Station, moment: datetime) -> None:
    """Set the station's clock."""
    station.clock.now = moment


def fail_sign_in(station: Station, address: str, username: str, agent: str = AGENT) -> None:
    """Try to sign in with a wrong password from ``address``; the station must refuse."""
    answer = station.client.simulate_post(
        "/auth/login",
        json={"username": username, "password": "not the password"},
        remote_addr=address,
        headers={"User-Agent": agent},
    )
    assert answer.status_code in (401, 403), answer.text


def add(who: SignedIn, value: str, **extra: Any) -> dict[str, Any]:
    """Add a ban list entry from the admin's address and return it."""
    answer = who.request(
        "POST", "/security/ip-filters", json={"value": value, **extra}, remote_addr=ADMIN_IP
    )
    assert answer.status_code == 201, answer.text
    return answer.json["filter"]


def disable(who: SignedIn, entry: dict[str, Any]) -> None:
    answer = who.request(
        "PATCH",
        f"/security/ip-filters/{entry['id']}",
        json={"active": False},
        remote_addr=ADMIN_IP,
    )
    assert answer.status_code == 200, answer.text


def event(engine: Engine, when: datetime, address: str, kind: str, **extra: Any) -> None:
    """Insert one security event as a detector would."""
    with begin_write(engine) as conn:
        conn.execute(
            security_events.insert().values(occurred_at=when, address=address, kind=kind, **extra)
        )


def overview(who: SignedIn) -> dict[str, Any]:
    answer = who.request("GET", OVERVIEW, remote_addr=ADMIN_IP)
    assert answer.status_code == 200, answer.text
    return answer.json


def test_overview_counts_the_last_24_hours(station: Station, admin: SignedIn) -> None:
    t0 = station.clock()
    day = timedelta(days=1)
    second = timedelta(seconds=1)
    for moment, address, username in (
        (t0 - day, "203.0.113.1", "root"),  # exactly 24 h old at t0: out
        (t0 - day + second, "203.0.113.1", "root"),
        (t0 - timedelta(hours=1), "203.0.113.2", "admin"),
        (t0 - timedelta(hours=1), "203.0.113.2", "admin"),
        (t0, "203.0.113.2", "boss"),
        (t0 + second, "203.0.113.3", "oracle"),  # after now: not yet
    ):
        at(station, moment)
        fail_sign_in(station, address, username)

    at(station, t0 - timedelta(hours=25))
    add(admin, "192.0.2.1")  # older than a day
    at(station, t0 - day)
    add(admin, "192.0.2.2")  # exactly a day old: out
    at(station, t0 - timedelta(hours=23))
    add(admin, "192.0.2.3", duration_minutes=30)  # in the window, expired by now
    at(station, t0 - timedelta(hours=3))
    add(admin, "192.0.2.50", source="ssh_brute_force", reason="auto_brute_force")
    disable(admin, add(admin, "192.0.2.51", source="ssh_brute_force"))
    at(station, t0 - timedelta(hours=2))
    add(admin, "192.0.2.64/28")
    at(station, t0 - timedelta(hours=1))
    add(admin, ADMIN_IP, kind="allowlist")  # allowlist entries are not bans
    at(station, t0)

    report = overview(admin)
    assert report["generated_at"] == z(t0)
    assert report["metrics"] == {
        "failed_logins_24h": 4,
        "ips_banned_24h": 4,  # .3, .50, .51 and the range
        "active_bans": 4,  # .1, .2, .50 and the range
        "ssh_attacks_blocked": 2,
        "ssh_bans_active": 1,
        "mirrorable": 3,  # single addresses only
        "mirrored": 0,
        "firewall_pending": 0,
    }
    enforcement = report["enforcement"]
    assert enforcement["ban_gate"] == {"state": "enforcing", "entries": 4}
    assert enforcement["active_bans"] == 4
    assert enforcement["allowlist_mode"] is True and enforcement["allowlist_entries"] == 1
    firewall = enforcement["host_firewall"]
    assert firewall["state"] == "off" and firewall["mirror_enabled"] is False
    assert firewall["checked_at"] is None and firewall["error"] is None
    with station.engine.connect() as conn:  # the reader's own meaning is tested elsewhere
        assert enforcement["automatic_bans"] == cs.automatic_bans_state(conn)
    assert report["viewer"] == {"admin": True, "can_manage_bans": True}

    # One second later the oldest counted failure leaves the window and the newest enters it.
    station.clock.advance(seconds=1)
    assert overview(admin)["metrics"]["failed_logins_24h"] == 4
    # At t0 + 23 h the failures of t0 - 1 h are exactly a day old; every ban was made earlier.
    at(station, t0 + timedelta(hours=23))
    admin = station.sign_in("boss", remote_addr=ADMIN_IP)  # the first session idled out
    later = overview(admin)["metrics"]
    assert (later["failed_logins_24h"], later["ips_banned_24h"]) == (2, 0)
    assert later["active_bans"] == 4, "bans outlive the 24 h window"


def test_overview_window_edges_move_with_the_clock(station: Station, admin: SignedIn) -> None:
    t0 = station.clock()
    at(station, t0 - timedelta(hours=24) + timedelta(seconds=1))
    fail_sign_in(station, "203.0.113.10", "root")
    add(admin, "192.0.2.10")
    at(station, t0)
    fail_sign_in(station, "203.0.113.11", "root")
    first = overview(admin)["metrics"]
    assert (first["failed_logins_24h"], first["ips_banned_24h"]) == (2, 1)
    station.clock.advance(seconds=1)  # the older rows are now exactly 24 h old
    second = overview(admin)["metrics"]
    assert (second["failed_logins_24h"], second["ips_banned_24h"]) == (1, 0)
    assert second["active_bans"] == 1, "a ban stays active when it leaves the 24 h window"


def test_viewer_sees_the_overview_but_not_the_daemon_error(
    station: Station, admin: SignedIn, engine: Engine, tmp_path: Path
) -> None:
    t0 = station.clock()
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher", remote_addr="198.51.100.20")
    add(admin, "192.0.2.7")
    add(admin, "192.0.2.0/24")
    with begin_write(engine) as conn:
        hs.save_settings(
            conn,
            {
                "mirror_enabled": True,
                "socket_path": str(tmp_path / "no-daemon.sock"),
                "config_dir": str(tmp_path / "fail2ban"),
            },
            station.clock(),
        )
    seen_by_admin = overview(admin)["enforcement"]["host_firewall"]
    assert seen_by_admin["state"] == "error" and seen_by_admin["mirror_enabled"] is True
    assert seen_by_admin["error"], "the admin sees the daemon's own words"
    assert seen_by_admin["mirrorable"] == 1 and seen_by_admin["firewall_pending"] == 1
    assert seen_by_admin["mirrored"] == 0
    assert seen_by_admin["checked_at"] == z(t0)

    answer = viewer.request("GET", OVERVIEW)
    assert answer.status_code == 200
    seen_by_viewer = answer.json["enforcement"]["host_firewall"]
    assert seen_by_viewer == {**seen_by_admin, "error": None}
    assert answer.json["metrics"]["firewall_pending"] == 1
    assert answer.json["viewer"] == {"admin": False, "can_manage_bans": False}
    assert viewer.request("GET", "/admin/hostban/status").status_code == 403

    # The probe is remembered: a later request reuses it until the ban list changes.
    station.clock.advance(seconds=30)
    assert overview(admin)["enforcement"]["host_firewall"]["checked_at"] == z(t0)
    add(admin, "192.0.2.8")
    moved = overview(admin)["enforcement"]["host_firewall"]
    assert moved["checked_at"] == z(t0 + timedelta(seconds=30)) and moved["firewall_pending"] == 2


def test_traffic_tab_buckets_top_addresses_and_recent_events(
    station: Station, admin: SignedIn, engine: Engine, tmp_path: Path
) -> None:
    t0 = station.clock()
    scanner, flooder = "8.8.8.8", "203.0.113.77"
    event(engine, t0 - timedelta(days=1), scanner, "flood")  # exactly a day old: out
    event(engine, t0 - timedelta(hours=23, minutes=59), flooder, "flood")
    event(engine, t0 - timedelta(minutes=90), scanner, "flood")
    event(engine, t0 - timedelta(minutes=80), scanner, "flood")
    event(
        engine,
        t0 - timedelta(minutes=30),
        scanner,
        "malicious_request",
        method="GET",
        path="/wp-login.php",
        user_agent="zgrab/0.x",
        detail="scanner path",
    )
    event(engine, t0, flooder, "api_abuse")
    event(engine, t0 + timedelta(seconds=1), flooder, "api_abuse")  # not yet
    add(admin, "203.0.113.0/24")
    target = slot_path(station.app.station.settings.data_dir, "location")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(city_db(tmp_path), target)

    answer = admin.request("GET", "/security/center/traffic", remote_addr=ADMIN_IP)
    assert answer.status_code == 200, answer.text
    data = answer.json
    assert (data["days"], data["since"], data["until"]) == (
        1,
        z(t0 - timedelta(days=1)),
        z(t0),
    )
    assert data["total"] == 5 and data["addresses"] == 2
    assert data["kinds"] == {
        "login_failure": 0,
        "malicious_request": 1,
        "flood": 3,
        "api_abuse": 1,
        "stream_abuse": 0,
        "auto_ban": 0,
    }
    hours = {bucket["hour"]: bucket for bucket in data["hours"]}
    assert len(data["hours"]) == 25, "this hour yesterday up to the current hour"
    assert sum(bucket["total"] for bucket in data["hours"]) == 5
    assert hours[z(t0 - timedelta(days=1))]["kinds"] == {"flood": 1}
    assert hours[z(t0 - timedelta(hours=2))]["kinds"] == {"flood": 2}
    assert hours[z(t0 - timedelta(hours=1))]["kinds"] == {"malicious_request": 1}
    assert hours[z(t0)] == {
        "hour": z(t0),
        "total": 1,
        "kinds": {"api_abuse": 1},
    }

    first, second = data["top_addresses"]
    assert first["address"] == scanner and first["events"] == 3
    assert first["kinds"] == {"flood": 2, "malicious_request": 1}
    assert first["banned"] is False and first["banned_by"] is None
    assert first["location"]["city"] == "Mountain View" and first["location"]["flag"] == "US"
    assert first["last_seen"] == z(t0 - timedelta(minutes=30))
    assert second["address"] == flooder and second["banned_by"] == "203.0.113.0/24"
    assert "location" not in second, "the test database does not hold that address"

    recent = data["recent"]
    assert [item["kind"] for item in recent] == [
        "api_abuse",
        "malicious_request",
        "flood",
        "flood",
        "flood",
    ]
    assert recent[1]["path"] == "/wp-login.php" and recent[1]["user_agent"] == "zgrab/0.x"

    week = admin.request("GET", "/security/center/traffic?days=7", remote_addr=ADMIN_IP).json
    assert week["total"] == 6 and len(week["hours"]) == 7 * 24 + 1
    bad = admin.request("GET", "/security/center/traffic?days=30", remote_addr=ADMIN_IP)
    assert bad.status_code == 422 and bad.json["error"]["details"]["field"] == "days"


def test_malicious_logins_tab_counts_per_address_with_ban_state(
    station: Station, admin: SignedIn
) -> None:
    t0 = station.clock()
    at(station, t0 - timedelta(hours=2))
    for username in ("root", "root", "admin"):
        fail_sign_in(station, "203.0.113.9", username, agent="hydra")
    at(station, t0 - timedelta(hours=1))
    fail_sign_in(station, "198.51.100.77", "bob", agent="Firefox")
    at(station, t0)
    add(admin, "203.0.113.0/24")
    add(admin, ADMIN_IP, kind="allowlist")
    fail_sign_in(station, "198.51.100.78", "carol")  # refused: not on the allowlist

    answer = admin.request("GET", "/security/center/logins", remote_addr=ADMIN_IP)
    assert answer.status_code == 200, answer.text
    data = answer.json
    assert data["total"] == 5 and data["addresses"] == 3
    top = data["by_address"][0]
    assert top["address"] == "203.0.113.9" and top["failures"] == 3
    assert top["usernames"] == ["root", "admin"] and top["username_count"] == 2
    assert top["banned"] is True and top["banned_by"] == "203.0.113.0/24"
    assert top["last_attempt"] == z(t0 - timedelta(hours=2))
    others = {item["address"]: item for item in data["by_address"][1:]}
    assert others["198.51.100.77"]["banned"] is False
    newest = data["recent"][0]
    assert newest["address"] == "198.51.100.78" and newest["username"] == "carol"
    assert newest["reason"] == "login_not_allowed"
    bob = [item for item in data["recent"] if item["username"] == "bob"]
    assert bob[0]["reason"] == "invalid_credentials" and bob[0]["user_agent"] == "Firefox"
    assert bob[0]["at"] == z(t0 - timedelta(hours=1))

    station.clock.advance(days=1)
    admin = station.sign_in("boss", remote_addr=ADMIN_IP)  # the first session idled out
    day = admin.request("GET", "/security/center/logins", remote_addr=ADMIN_IP).json
    week = admin.request("GET", "/security/center/logins?days=7", remote_addr=ADMIN_IP).json
    assert (day["total"], week["total"]) == (0, 5), "a successful sign-in is not a failure"


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/traffic", "/security/center?tab=traffic"),
        ("/traffic?days=7&tab=banned-ips", "/security/center?tab=traffic&days=7"),
        ("/security/malicious-logins", "/security/center?tab=malicious-logins"),
        ("/security/malicious-logins?days=7", "/security/center?tab=malicious-logins&days=7"),
    ],
)
def test_legacy_paths_redirect_to_their_tab(station: Station, path: str, target: str) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    parts = urlsplit(path)
    answer = viewer.request("GET", parts.path, query_string=parts.query)
    assert answer.status_code == 301
    assert answer.headers["location"] == target

    browser = station.client.simulate_get(
        parts.path, query_string=parts.query, headers={"Accept": "text/html"}
    )
    assert browser.status_code == 303
    assert urlsplit(browser.headers["location"]).path == "/login"
    assert station.client.simulate_get(parts.path).status_code == 401


@pytest.mark.parametrize(
    ("role", "can_manage", "is_admin"),
    [("admin", True, True), ("operator", False, False), ("viewer", False, False)],
)
def test_page_shows_controls_by_permission(
    station: Station, role: str, can_manage: bool, is_admin: bool
) -> None:
    station.add_user("someone", role)
    who = station.sign_in("someone")
    page = who.request("GET", "/security/center", query_string="tab=banned-ips")
    assert page.status_code == 200
    html = page.text
    assert f'data-can-manage="{"true" if can_manage else "false"}"' in html
    assert f'data-is-admin="{"true" if is_admin else "false"}"' in html
    assert ('id="ban-form"' in html) is can_manage
    assert ('id="fw-resync"' in html) is is_admin
    assert ('id="firewall-admin-note"' in html) is not is_admin
    assert 'id="tab-banned-ips" data-tab="banned-ips"' in html
    selected = html.split('id="tab-banned-ips"', 1)[1].split(">", 1)[0]
    assert 'aria-selected="true"' in selected
    assert 'id="panel-traffic" aria-labelledby="tab-traffic" tabindex="0" hidden' in html

    overview_answer = who.request("GET", OVERVIEW)
    assert overview_answer.status_code == 200
    assert overview_answer.json["viewer"] == {"admin": is_admin, "can_manage_bans": can_manage}


def test_signed_out_callers_are_sent_to_sign_in(station: Station) -> None:
    page = station.client.simulate_get("/security/center", headers={"Accept": "text/html"})
    assert page.status_code == 303
    assert page.headers["location"].startswith("/login?next=")
    for path in (OVERVIEW, "/security/center/traffic", "/security/center/logins"):
        answer = station.client.simulate_get(path)
        assert answer.status_code == 401 and answer.json["error"]["code"] == "unauthorized"


def test_unknown_tab_falls_back_to_traffic(station: Station) -> None:
    station.add_user("watcher", "viewer", PASSWORD)
    viewer = station.sign_in("watcher")
    html = viewer.request("GET", "/security/center", query_string="tab=nope&days=9").text
    selected = html.split('id="tab-traffic"', 1)[1].split(">", 1)[0]
    assert 'aria-selected="true"' in selected
    assert 'data-days="1"' in html
