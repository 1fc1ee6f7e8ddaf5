"""Automatic bans through the real app: each detector, the ban it makes, exemptions, processes."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import falcon.testing
import orjson
import pytest
from sqlalchemy import Engine, event, select

from alertstation.app import create_app
from alertstation.audit.tables import audit_logs
from alertstation.db.types import as_utc
from alertstation.security.autoban.detectors import AutoBanMiddleware, apply_trip
from alertstation.security.autoban.service import Outcome, Trip
from alertstation.security.autoban.settings import DEFAULT_RULES, FLOOD
from alertstation.security.autoban.tables import security_events
from alertstation.security.bans.tables import ip_filters
from alertstation.worker.jobs import JOBS
from tests.support import PASSWORD, SignedIn, make_settings
from tests.support import StationHarness as Station

AUTOBAN = "/admin/security/autoban"
PROXY = "127.0.0.1"  # the default trusted proxy
A = "203.0.113.50"
B = "198.51.100.77"
V6 = "2001:db8:77::5"
UA = "pytest-autoban/1.0"


# --- helpers --------------------------------------------------------------------------------


@pytest.fixture
def boss(station: Station) -> SignedIn:
    """An admin signed in from loopback: never counted, never banned."""
    station.add_user("boss", "admin")
    return station.sign_in("boss", remote_addr=PROXY)


def configure(boss: SignedIn, **detectors: dict[str, Any]) -> None:
    result = boss.request("PUT", AUTOBAN, json={"detectors": detectors})
    assert result.status_code == 200, result.text


def send(
    client: falcon.testing.TestClient,
    address: str,
    path: str = "/healthz",
    *,
    proxied: bool = False,
    method: str = "GET",
    **kw: Any,
) -> falcon.testing.Result:
    """Send a request from ``address``: as the direct peer, or forwarded by the trusted proxy."""
    headers = {"User-Agent": UA, **kw.pop("headers", {})}
    if proxied:
        headers["X-Forwarded-For"] = address
        return client.simulate_request(method, path, remote_addr=PROXY, headers=headers, **kw)
    return client.simulate_request(method, path, remote_addr=address, headers=headers, **kw)


def fail_login(client: falcon.testing.TestClient, address: str, username: str, **kw: Any) -> Any:
    return send(
        client,
        address,
        "/auth/login",
        method="POST",
        json={"username": username, "password": "wrong"},
        **kw,
    )


def blocklist(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        query = select(ip_filters).where(ip_filters.c.kind == "blocklist")
        return list(conn.execute(query.order_by(ip_filters.c.id)))


def events(engine: Engine, kind: str) -> list[Any]:
    with engine.connect() as conn:
        query = select(security_events).where(security_events.c.kind == kind)
        return list(conn.execute(query.order_by(security_events.c.id)))


def audit(engine: Engine, action: str = "security.auto_ban") -> list[Any]:
    with engine.connect() as conn:
        query = select(audit_logs).where(audit_logs.c.action == action)
        return list(conn.execute(query.order_by(audit_logs.c.id)))


def assert_banned(result: falcon.testing.Result, where: object = None) -> None:
    assert result.status_code == 403, (where, result.status_code, result.text)
    assert result.json["error"]["code"] == "banned", where


def _concrete(path: str) -> str:
    return re.sub(r"\{(\w+)(:int)?\}", lambda m: "1" if m.group(2) else "sample", path)


def other_app(station: Station, tmp_path: Path, engine: Engine) -> falcon.testing.TestClient:
    """A second instance of the station on the same database (another web process)."""
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    return falcon.testing.TestClient(create_app(settings, engine=engine, clock=station.clock))


def poll_banned(client: falcon.testing.TestClient, address: str) -> int:
    """Wait (at most 5 s) for an instance's once-a-second ban check to see a new ban."""
    deadline = time.monotonic() + 5.0
    status = send(client, address).status_code
    while status != 403 and time.monotonic() < deadline:
        time.sleep(0.05)
        status = send(client, address).status_code
    return status


# --- login brute force ----------------------------------------------------------------------


def test_login_brute_force_bans_at_exactly_the_threshold(
    station: Station, boss: SignedIn, engine: Engine
) -> None:
    configure(boss, login_brute_force={"threshold": 4, "window_seconds": 300, "ban_seconds": 1800})
    station.add_user("ops", "operator")
    client = station.client
    for attempt in range(3):
        result = fail_login(client, A, f"guess{attempt}", proxied=bool(attempt % 2))
        assert result.status_code == 401, attempt
        station.clock.advance(seconds=30)
    assert blocklist(engine) == []
    assert fail_login(client, B, "someone").status_code == 401, "other addresses count apart"

    assert_banned(fail_login(client, A, "x" * 64))
    [entry] = blocklist(engine)
    assert (entry.value, entry.source, entry.reason, entry.active) == (
        A,
        "login_brute_force",
        "auto_login_brute_force",
        True,
    )
    assert as_utc(entry.expires_at) == station.clock() + timedelta(seconds=1800)
    assert as_utc(entry.created_at) == station.clock()
    assert "4 failed sign-ins within 300 s" in entry.description

    failures = [row for row in events(engine, "login_failure") if row.address == A]
    assert [row.detail for row in failures] == ["guess0", "guess1", "guess2", "x" * 64]
    assert {(row.method, row.path, row.user_agent) for row in failures} == {
        ("POST", "/auth/login", UA)
    }
    [banned] = events(engine, "auto_ban")
    assert banned.address == A and "Login Brute Force" in banned.detail
    [row] = audit(engine)
    assert (row.target, row.client_ip, row.username, row.user_id) == (A, A, "autoban", None)
    details = orjson.loads(row.details)
    assert details["source"] == "login_brute_force" and details["count"] == 4
    assert (details["threshold"], details["window_seconds"], details["ban_seconds"]) == (
        4,
        300,
        1800,
    )
    assert details["reactivated"] is False and details["id"] == entry.id

    # The gate now answers 403 for A on every route, the right password included; B is fine.
    for route in station.app.registry:
        assert_banned(client.simulate_request(route.method, _concrete(route.path), remote_addr=A))
    right = client.simulate_post(
        "/auth/login", json={"username": "ops", "password": PASSWORD}, remote_addr=A
    )
    assert_banned(right)
    assert send(client, B).status_code == 200
    assert send(client, A, proxied=True).status_code == 403


def test_login_failures_outside_the_window_do_not_add_up(
    station: Station, boss: SignedIn, engine: Engine
) -> None:
    configure(boss, login_brute_force={"threshold": 3, "window_seconds": 60})
    for _ in range(2):
        assert fail_login(station.client, V6, "root").status_code == 401
    station.clock.advance(seconds=61)
    for _ in range(2):
        assert fail_login(station.client, V6, "root").status_code == 401
    assert blocklist(engine) == []
    assert_banned(fail_login(station.client, V6, "root"))
    assert [entry.value for entry in blocklist(engine)] == [V6]


def test_login_failures_are_counted_across_instances(
    station: Station, boss: SignedIn, engine: Engine, tmp_path: Path
) -> None:
    configure(boss, login_brute_force={"threshold": 4})
    other = other_app(station, tmp_path, engine)
    clients = [station.client, other]
    for attempt in range(3):
        assert fail_login(clients[attempt % 2], A, "admin").status_code == 401
    assert blocklist(engine) == []
    assert_banned(fail_login(other, A, "admin"))  # the 4th, on the second instance
    assert len(blocklist(engine)) == 1
    assert poll_banned(station.client, A) == 403, "the first instance follows within a second"


# --- malicious requests ---------------------------------------------------------------------


def test_a_probe_url_with_a_nul_is_recorded_and_banned(station: Station, engine: Engine) -> None:
    client = station.client
    assert send(client, A, "/wp-login.php%00").status_code == 404
    assert send(client, A, "/.env%00.bak").status_code == 404
    assert send(client, A, "/cgi-bin/test.cgi%00").status_code == 403, "banned at the third"
    assert [entry.value for entry in blocklist(engine)] == [A]
    seen = events(engine, "malicious_request")
    assert [row.path for row in seen] == [
        "/wp-login.php%00",
        "/.env%00.bak",
        "/cgi-bin/test.cgi%00",
    ]
    assert len(audit(engine)) == 1


def test_malicious_requests_ban_at_the_third_probe(station: Station, engine: Engine) -> None:
    client = station.client
    rule = DEFAULT_RULES["malicious_request"]
    assert (rule.threshold, rule.window_seconds) == (3, 600)
    assert send(client, A, "/wp-login.php").status_code == 404
    assert send(client, A, "/alerts").status_code in (401, 303), "clean requests do not count"
    assert send(client, A, "/.env", proxied=True).status_code == 404
    for path in ("/api/alerts", "/security/ip-filters", "/login"):
        assert send(client, B, path).status_code < 500
    assert send(client, B, "/cgi-bin/test.cgi").status_code == 404
    assert blocklist(engine) == []

    probe = send(
        client,
        A,
        "/api/alerts",
        query_string="id=1%20UNION%20SELECT%20password%20FROM%20users",
        headers={"Accept": "text/html"},
    )
    assert probe.status_code == 403 and "banned" in probe.text
    [entry] = blocklist(engine)
    assert (entry.value, entry.source, entry.reason) == (
        A,
        "malicious_request",
        "auto_malicious_request",
    )
    assert as_utc(entry.expires_at) == station.clock() + timedelta(seconds=rule.ban_seconds)
    seen = events(engine, "malicious_request")
    assert [(row.address, row.path) for row in seen] == [
        (A, "/wp-login.php"),
        (A, "/.env"),
        (B, "/cgi-bin/test.cgi"),
        (A, "/api/alerts?id=1%20UNION%20SELECT%20password%20FROM%20users"),
    ]
    assert seen[0].detail.startswith("scanner path") and "SQL injection" in seen[3].detail
    assert len(audit(engine)) == 1
    assert send(client, B, "/healthz").status_code == 200
    assert_banned(send(client, A, "/healthz"))


# --- flood ------------------------------------------------------------------------------------


def test_flood_bans_at_exactly_the_threshold_and_skips_static(
    station: Station, boss: SignedIn, engine: Engine
) -> None:
    configure(boss, flood={"threshold": 20, "window_seconds": 10, "ban_seconds": 600})
    client = station.client
    for number in range(19):
        assert send(client, A, proxied=bool(number % 2)).status_code == 200, number
    for _ in range(40):
        assert send(client, A, "/static/css/app.css").status_code == 200
    for _ in range(19):
        assert send(client, B).status_code == 200
    assert blocklist(engine) == []
    assert_banned(send(client, A))
    [entry] = blocklist(engine)
    assert (entry.value, entry.source, entry.reason) == (A, "flood", "auto_flood")
    assert as_utc(entry.expires_at) == station.clock() + timedelta(seconds=600)
    assert "20 requests within 10 s" in entry.description
    reports = [row for row in events(engine, "flood") if row.address == A]
    assert [row.detail for row in reports] == ["5 requests"] * 4  # a quarter of the threshold
    station.clock.advance(seconds=11)
    assert send(client, B).status_code == 200, "B's requests left the window"
    assert_banned(send(client, A))


def test_flood_counts_only_within_the_window(
    station: Station, boss: SignedIn, engine: Engine
) -> None:
    configure(boss, flood={"threshold": 20, "window_seconds": 10})
    client = station.client
    for _ in range(15):
        assert send(client, A).status_code == 200
    station.clock.advance(seconds=11)
    for _ in range(19):
        assert send(client, A).status_code == 200
    assert blocklist(engine) == []
    assert_banned(send(client, A))


def test_a_flood_spread_over_two_instances_is_caught(
    station: Station, boss: SignedIn, engine: Engine, tmp_path: Path
) -> None:
    configure(boss, flood={"threshold": 40, "window_seconds": 10})
    clients = [station.client, other_app(station, tmp_path, engine)]
    for number in range(39):  # 20 to the first instance, 19 to the second
        assert send(clients[number % 2], A).status_code == 200, number
    assert blocklist(engine) == []
    # Each instance alone saw 20, half the threshold; their reports add up to 40 now.
    assert_banned(send(clients[1], A))
    assert [entry.source for entry in blocklist(engine)] == ["flood"]
    assert sum(int(row.detail.split()[0]) for row in events(engine, "flood")) == 40


# --- API and stream abuse -------------------------------------------------------------------


def test_api_abuse_counts_error_answers_on_api_paths(
    station: Station, boss: SignedIn, engine: Engine
) -> None:
    configure(boss, api_abuse={"threshold": 5, "window_seconds": 60})
    client = station.client
    assert send(client, A, "/api/admin/users").status_code == 401
    assert send(client, A, "/api/no/such/thing", proxied=True).status_code == 404
    for _ in range(10):
        assert send(client, A, "/api/alerts").status_code == 200, "answered: not abuse"
        assert send(client, A, "/admin/users").status_code == 401, "not an API path"
    assert send(client, A, "/api/admin/sessions").status_code == 401
    assert send(client, A, "/api/admin/users").status_code == 401
    assert blocklist(engine) == []
    last = send(client, A, "/api/admin/users")
    assert_banned(last)
    assert last.headers["content-type"].startswith("application/json")
    [entry] = blocklist(engine)
    assert (entry.source, entry.reason) == ("api_abuse", "auto_api_abuse")
    assert "5 API error answers" in entry.description
    assert_banned(send(client, A, "/api/alerts"))


def test_stream_abuse_counts_requests_to_the_watched_paths(
    station: Station, boss: SignedIn, engine: Engine
) -> None:
    configure(boss, stream_abuse={"threshold": 5, "window_seconds": 60, "ban_seconds": 0})
    client = station.client
    for number in range(4):
        assert send(client, A, f"/messages/{number}/audio.wav").status_code == 401
        assert send(client, A, "/messages").status_code == 401, "the list is no stream"
    assert blocklist(engine) == []
    assert_banned(send(client, A, "/eas/manual/events/9/audio.wav"))
    [entry] = blocklist(engine)
    assert (entry.source, entry.expires_at) == ("stream_abuse", None), "0 seconds: permanent"

    configure(boss, stream_abuse={"paths": ["/stream"], "threshold": 3})
    for _ in range(5):
        assert send(client, B, "/messages/1/audio.wav").status_code == 401, "no longer watched"
        assert send(client, B, "/streams").status_code == 404, "not under /stream"
    assert send(client, B, "/stream").status_code == 404
    assert send(client, B, "/stream/live.mp3").status_code == 404
    assert_banned(send(client, B, "/stream/live.mp3"))
    assert [entry.value for entry in blocklist(engine)] == [A, B]


# --- exemptions, expiry, switches -----------------------------------------------------------


def test_loopback_and_allowlisted_addresses_are_never_banned(
    station: Station, boss: SignedIn, engine: Engine
) -> None:
    configure(
        boss,
        login_brute_force={"threshold": 2},
        flood={"threshold": 20},
        malicious_request={"threshold": 1},
    )
    client = station.client
    allowed = boss.request(
        "POST",
        "/security/ip-filters",
        json={"value": "203.0.113.0/24", "kind": "allowlist", "confirm_lockout": True},
    )
    assert allowed.status_code == 201, allowed.text
    for address in ("127.0.0.1", "::1", A):
        for _ in range(3):
            assert fail_login(client, address, "root").status_code in (401, 403)
        for _ in range(30):
            assert send(client, address).status_code == 200, address
        assert send(client, address, "/wp-admin/").status_code == 404
    # The proxy forwarding for a loopback client is exempt as well.
    for _ in range(30):
        assert send(client, "::1", proxied=True).status_code == 200
    assert blocklist(engine) == []
    assert audit(engine) == []
    assert {row.address for row in events(engine, "login_failure")} == {A}, (
        "loopback's failures are refused by allowlist mode before the password check"
    )


def test_an_expired_automatic_ban_lets_go_and_is_switched_on_again(
    station: Station, boss: SignedIn, engine: Engine
) -> None:
    configure(boss, flood={"threshold": 10, "window_seconds": 10, "ban_seconds": 120})
    client = station.client
    for _ in range(9):
        send(client, A)
    assert_banned(send(client, A))
    [first] = blocklist(engine)
    station.clock.advance(seconds=121)
    assert send(client, A).status_code == 200, "expired: the gate lets it through"
    job = next(job for job in JOBS if job.name == "ban-expiry")
    job.run(station.app.station)
    [expired] = blocklist(engine)
    assert expired.active is False
    for _ in range(8):
        assert send(client, A).status_code == 200
    assert_banned(send(client, A))
    [again] = blocklist(engine)
    assert again.id == first.id and again.active is True
    assert as_utc(again.expires_at) == station.clock() + timedelta(seconds=120)
    rows = audit(engine)
    assert [orjson.loads(row.details)["reactivated"] for row in rows] == [False, True]


def test_a_disabled_detector_does_nothing(station: Station, boss: SignedIn, engine: Engine) -> None:
    configure(
        boss,
        flood={"enabled": False, "threshold": 5},
        login_brute_force={"enabled": False, "threshold": 2},
        malicious_request={"enabled": False},
        api_abuse={"enabled": False, "threshold": 2},
        stream_abuse={"enabled": False, "threshold": 2},
    )
    client = station.client
    for _ in range(10):
        assert send(client, A).status_code == 200
        assert fail_login(client, A, "root").status_code == 401
        assert send(client, A, "/.git/config").status_code == 404
        assert send(client, A, "/api/admin/users").status_code == 401
        assert send(client, A, "/messages/1/audio.wav").status_code == 401
    assert blocklist(engine) == []
    assert events(engine, "malicious_request") == []
    assert len(events(engine, "login_failure")) == 10, "failed sign-ins are still recorded"
    configure(boss, flood={"enabled": True})
    for _ in range(4):
        assert send(client, A).status_code == 200
    assert_banned(send(client, A))


# --- concurrency, memory, cost --------------------------------------------------------------


def test_concurrent_trips_make_one_ban(
    station: Station, boss: SignedIn, engine: Engine, tmp_path: Path
) -> None:
    configure(boss, flood={"threshold": 10, "window_seconds": 60})
    clients = [station.client, other_app(station, tmp_path, engine)]
    barrier = threading.Barrier(8)
    statuses: list[int] = []

    def hammer(number: int) -> None:
        barrier.wait()
        for _ in range(6):
            statuses.append(send(clients[number % 2], A).status_code)

    threads = [threading.Thread(target=hammer, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(statuses) == 48 and set(statuses) <= {200, 403} and 403 in statuses
    assert len(blocklist(engine)) == 1
    assert len(audit(engine)) == 1
    assert len(events(engine, "auto_ban")) == 1


def test_concurrent_ban_attempts_are_idempotent(
    station: Station, engine: Engine, tmp_path: Path
) -> None:
    stations = [station.app.station, other_app(station, tmp_path, engine).app.station]
    trip = Trip(B, DEFAULT_RULES[FLOOD], 300, "GET /healthz")
    barrier = threading.Barrier(6)
    outcomes: list[Outcome] = []

    def attempt(number: int) -> None:
        req = falcon.testing.create_req(remote_addr=B)
        req.context.client_ip = B
        barrier.wait()
        outcomes.append(apply_trip(stations[number % 2], trip, req))

    threads = [threading.Thread(target=attempt, args=(number,)) for number in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcome.value for outcome in outcomes) == ["already_banned"] * 5 + ["banned"]
    assert len(blocklist(engine)) == 1 and len(audit(engine)) == 1


def _request(address: str, path: str = "/healthz") -> falcon.Request:
    req = falcon.testing.create_req(path=path, remote_addr=address)
    req.context.client_ip = address
    return req


def test_tracked_addresses_stay_within_the_bound(station: Station) -> None:
    middleware = AutoBanMiddleware(station.app.station, capacity=64)
    resp = falcon.Response()
    for number in range(1_000):
        middleware.process_request(_request(f"10.1.{number // 250}.{number % 250}"), resp)
        middleware.process_request(_request(f"2001:db8::{number:x}", "/stream/x"), resp)
    sizes = middleware.watch().sizes()
    assert sizes[FLOOD] == 64 and sizes["stream_abuse"] == 64


def test_no_database_query_on_the_usual_request(station: Station, engine: Engine) -> None:
    middleware = AutoBanMiddleware(station.app.station)
    resp = falcon.Response()
    middleware.process_request(_request(A), resp)  # loads the settings
    statements: list[str] = []
    requests_thread = threading.get_ident()

    checks: Counter[str] = Counter()

    def record(*args: object) -> None:
        # Not a background flusher's writes, and not SQLite's BEGIN that opens a check.
        if threading.get_ident() == requests_thread and str(args[2]).strip() != "BEGIN":
            statements.append(str(args[2]))
            checks[repr(args[3])] += 1

    started = time.monotonic()
    event.listen(engine, "before_cursor_execute", record)
    try:
        for number in range(200):
            middleware.process_request(_request(f"192.0.2.{number % 50}"), resp)
            middleware.process_request(_request(f"198.51.100.{number % 50}", "/stream/x"), resp)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    elapsed = time.monotonic() - started
    # Each generation at most once a second (a loaded machine can take seconds for the loop).
    assert all("generations" in statement for statement in statements), statements
    assert all(count <= int(elapsed) + 1 for count in checks.values()), (checks, elapsed)
