"""The ban gate: 403 on every route for a banned client, its exemptions, spoofing, propagation."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from pathlib import Path

import falcon.testing
from sqlalchemy import Engine, event

from alertstation.app import create_app
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from alertstation.security.bans.entries import NewFilter
from alertstation.security.bans.gate import BanCache
from alertstation.security.bans.service import create_filter
from alertstation.worker.jobs import JOBS
from tests.security.conftest import ADMIN_IP
from tests.support import Clock, SignedIn, make_settings
from tests.support import StationHarness as Station

BANNED = "203.0.113.66"
BANNED_V6 = "2001:db8:bad::1"
CLEAN = "192.0.2.44"
PROXY = "127.0.0.1"  # the default trusted proxy
PATH = "/security/ip-filters"


def ban(admin: SignedIn, value: str, **body: object) -> dict[str, object]:
    result = admin.request("POST", PATH, json={"value": value, **body}, remote_addr=ADMIN_IP)
    assert result.status_code == 201, result.text
    return result.json["filter"]  # type: ignore[no-any-return]


def _concrete(path: str) -> str:
    return re.sub(r"\{(\w+)(:int)?\}", lambda m: "1" if m.group(2) else "sample", path)


def assert_banned(result: falcon.testing.Result, where: object) -> None:
    assert result.status_code == 403, (where, result.status_code)
    assert result.json["error"]["code"] == "banned", where


def test_every_registered_route_is_403_for_a_banned_client(
    station: Station, admin: SignedIn
) -> None:
    ban(admin, BANNED)
    ban(admin, "2001:db8:bad::/48", reason="range")
    client = station.client
    assert len(station.app.registry) >= 10
    for route in station.app.registry:
        path = _concrete(route.path)
        for address in (BANNED, BANNED_V6):
            direct = client.simulate_request(route.method, path, remote_addr=address)
            assert_banned(direct, (route, address))
            proxied = client.simulate_request(
                route.method, path, remote_addr=PROXY, headers={"X-Forwarded-For": address}
            )
            assert_banned(proxied, (route, "via proxy", address))
        signed_in = admin.request(route.method, path, remote_addr=BANNED)
        assert_banned(signed_in, (route, "with a session"))
    assert_banned(client.simulate_get("/no/such/page", remote_addr=BANNED), "unknown path")
    assert_banned(client.simulate_get("/healthz", remote_addr="::ffff:" + BANNED), "mapped")
    html = client.simulate_get("/", remote_addr=BANNED, headers={"Accept": "text/html"})
    assert html.status_code == 403 and "banned" in html.text


def test_loopback_and_static_are_exempt_and_others_pass(station: Station, admin: SignedIn) -> None:
    local = admin.request("POST", PATH, json={"value": "127.0.0.0/8"}, remote_addr=PROXY)
    assert local.status_code == 201
    admin.request("POST", PATH, json={"value": "::1"}, remote_addr=PROXY)
    ban(admin, BANNED)
    client = station.client
    for address in ("127.0.0.1", "127.9.9.9", "::1"):
        assert client.simulate_get("/healthz", remote_addr=address).status_code == 200, address
    for name in ("css/app.css", "js/app.js"):
        static = client.simulate_get(f"/static/{name}", remote_addr=BANNED)
        assert static.status_code == 200, name
    missing = client.simulate_get("/static/nothing.css", remote_addr=BANNED)
    assert missing.status_code == 404
    assert client.simulate_get("/healthz", remote_addr=CLEAN).status_code == 200
    # The proxy forwarding for a loopback client (a local health probe) is exempt too.
    probe = client.simulate_get("/healthz", remote_addr=PROXY, headers={"X-Forwarded-For": "::1"})
    assert probe.status_code == 200


def test_allowlist_never_turns_the_gate_into_deny_all(station: Station, admin: SignedIn) -> None:
    result = admin.request(
        "POST", PATH, json={"value": ADMIN_IP, "kind": "allowlist"}, remote_addr=ADMIN_IP
    )
    assert result.status_code == 201
    for address in (CLEAN, BANNED, "2001:db8::7"):
        health = station.client.simulate_get("/healthz", remote_addr=address)
        assert health.status_code == 200, address
        login_page = station.client.simulate_get("/login", remote_addr=address)
        assert login_page.status_code == 200, address


def test_forwarded_for_cannot_unban_or_frame(station: Station, admin: SignedIn) -> None:
    ban(admin, BANNED)
    client = station.client
    # A banned peer that is not the proxy is judged by its own address, whatever it claims.
    for claim in (CLEAN, "127.0.0.1", "::1", f"{CLEAN}, 127.0.0.1"):
        spoof = client.simulate_get(
            "/healthz", remote_addr=BANNED, headers={"X-Forwarded-For": claim}
        )
        assert_banned(spoof, claim)
    # A clean peer cannot get itself (or anyone) judged as the banned address.
    framed = client.simulate_get("/healthz", remote_addr=CLEAN, headers={"X-Forwarded-For": BANNED})
    assert framed.status_code == 200
    # Through the proxy only the right-most entry (the one the proxy appended) counts.
    left = client.simulate_get(
        "/healthz", remote_addr=PROXY, headers={"X-Forwarded-For": f"{BANNED}, {CLEAN}"}
    )
    assert left.status_code == 200
    right = client.simulate_get(
        "/healthz", remote_addr=PROXY, headers={"X-Forwarded-For": f"{CLEAN}, {BANNED}"}
    )
    assert_banned(right, "right-most")
    unban_try = client.simulate_get(
        "/healthz", remote_addr=PROXY, headers={"X-Forwarded-For": f"{BANNED}, 127.0.0.1"}
    )
    assert unban_try.status_code == 200, "the proxy vouched for loopback; the left entry is noise"


def test_disabled_and_expired_bans_stop_applying(
    station: Station, admin: SignedIn, engine: Engine
) -> None:
    entry = ban(admin, BANNED, duration_minutes=5)
    other = ban(admin, "203.0.113.0/24", duration_minutes=20)
    client = station.client
    assert_banned(client.simulate_get("/healthz", remote_addr=BANNED), "fresh")
    station.clock.advance(minutes=6)
    statements: list[str] = []
    requests_thread = threading.get_ident()

    checks: Counter[str] = Counter()

    def record(*args: object) -> None:
        # Only the request path counts: the traffic recorder's flusher writes from its own
        # thread, in the background, whatever the requests do.
        if threading.get_ident() == requests_thread and str(args[2]).strip() != "BEGIN":
            statements.append(str(args[2]))  # (SQLite's BEGIN opens each check: not counted)
            checks[repr(args[3])] += 1

    event.listen(engine, "before_cursor_execute", record)
    try:
        # The /32 expired; the /24 around it still holds. Pruned in memory: the table is not
        # read again (at most the once-a-second generation check may run).
        assert_banned(client.simulate_get("/healthz", remote_addr=BANNED), "covered by the /24")
        assert client.simulate_get("/static/css/app.css", remote_addr=BANNED).status_code == 200
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert not [s for s in statements if "ip_filters" in s]
    station.clock.advance(minutes=15)
    assert client.simulate_get("/healthz", remote_addr=BANNED).status_code == 200
    # The worker job then turns both rows off for good.
    job = next(job for job in JOBS if job.name == "ban-expiry")
    assert job.interval == 60.0
    job.run(station.app.station)
    listed = admin.request("GET", PATH, remote_addr=ADMIN_IP).json["filters"]
    assert {row["id"]: row["active"] for row in listed} == {entry["id"]: False, other["id"]: False}
    again = ban(admin, "203.0.113.0/25")
    admin.request("PATCH", f"{PATH}/{again['id']}", json={"active": False}, remote_addr=ADMIN_IP)
    assert client.simulate_get("/healthz", remote_addr=BANNED).status_code == 200


def test_no_database_query_per_request(station: Station, admin: SignedIn, engine: Engine) -> None:
    ban(admin, BANNED)
    client = station.client
    client.simulate_get("/healthz", remote_addr=CLEAN)  # builds the table
    statements: list[str] = []
    requests_thread = threading.get_ident()

    checks: Counter[str] = Counter()

    def record(*args: object) -> None:
        # Only the request path counts: the traffic recorder's flusher writes from its own
        # thread, in the background, whatever the requests do.
        if threading.get_ident() == requests_thread and str(args[2]).strip() != "BEGIN":
            statements.append(str(args[2]))  # (SQLite's BEGIN opens each check: not counted)
            checks[repr(args[3])] += 1

    started = time.monotonic()
    event.listen(engine, "before_cursor_execute", record)
    try:
        for _ in range(50):
            assert_banned(client.simulate_get("/healthz", remote_addr=BANNED), "cached")
    finally:
        event.remove(engine, "before_cursor_execute", record)
    elapsed = time.monotonic() - started
    # Nothing but generation checks, each generation at most once a second (on a loaded
    # machine the 50 requests can take seconds, and each cache checks its own generation).
    assert all("generations" in statement for statement in statements), statements
    assert all(count <= int(elapsed) + 1 for count in checks.values()), (checks, elapsed)


def test_a_change_through_one_instance_reaches_another(
    station: Station, admin: SignedIn, tmp_path: Path, engine: Engine
) -> None:
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    other = falcon.testing.TestClient(create_app(settings, engine=engine))
    assert other.simulate_get("/healthz", remote_addr=BANNED).status_code == 200  # table built
    entry = ban(admin, BANNED)

    def poll(expected: int) -> int:
        deadline = time.monotonic() + 5.0
        status = other.simulate_get("/healthz", remote_addr=BANNED).status_code
        while status != expected and time.monotonic() < deadline:
            time.sleep(0.05)
            status = other.simulate_get("/healthz", remote_addr=BANNED).status_code
        return status

    assert poll(403) == 403
    admin.request("DELETE", f"{PATH}/{entry['id']}", remote_addr=ADMIN_IP)
    assert poll(200) == 200


def test_cache_keeps_its_last_table_while_the_database_is_down(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'gate.db'}")
    upgrade_to_head(engine)
    clock = Clock()
    with begin_write(engine) as conn:
        create_filter(conn, NewFilter(BANNED), now=clock(), requester_ip="127.0.0.1")
    ticks = [0.0]
    cache = BanCache(engine, clock=clock, monotonic=lambda: ticks[0])
    assert cache.is_banned(BANNED) and not cache.is_banned(CLEAN)
    assert cache.generation == 1
    engine.dispose()
    (tmp_path / "gate.db").unlink()
    (tmp_path / "gate.db").mkdir()  # the file is gone and cannot be re-created: queries fail
    ticks[0] = 5.0
    cache.clear()
    assert cache.is_banned(BANNED), "the last good table still applies"
    down = BanCache(engine, clock=clock, monotonic=lambda: ticks[0])
    assert not down.is_banned(BANNED), "no table yet: the gate stays open and logs"
    engine.dispose()
