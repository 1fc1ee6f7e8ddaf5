"""Login allowlist mode: while an allowlist entry is in force only listed addresses may sign in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from alertstation.auth.sessions import COOKIE_NAME
from tests.security.conftest import ADMIN_IP
from tests.support import PASSWORD, SignedIn
from tests.support import StationHarness as Station

Rows = Callable[[], list[dict[str, Any]]]
PATH = "/security/ip-filters"
OUTSIDER = "203.0.113.9"


def sign_in(station: Station, remote_addr: str, **kw: Any) -> Any:
    return station.client.simulate_post(
        "/auth/login",
        json={"username": "ops", "password": PASSWORD},
        remote_addr=remote_addr,
        **kw,
    )


def allow(admin: SignedIn, value: str, **body: Any) -> dict[str, Any]:
    result = admin.request(
        "POST", PATH, json={"value": value, "kind": "allowlist", **body}, remote_addr=ADMIN_IP
    )
    assert result.status_code == 201, result.text
    return result.json["filter"]  # type: ignore[no-any-return]


def test_only_listed_addresses_sign_in_and_loopback_is_not_exempt(
    station: Station, admin: SignedIn, audit_rows: Rows
) -> None:
    station.add_user("ops", "operator")
    assert sign_in(station, OUTSIDER).status_code == 200, "no allowlist: anyone may sign in"
    allow(admin, "198.51.100.0/24")
    for address in (OUTSIDER, "127.0.0.1", "::1", "2001:db8::1"):
        refused = sign_in(station, address)
        assert refused.status_code == 403, address
        assert refused.json["error"]["code"] == "login_not_allowed"
        assert COOKIE_NAME not in refused.cookies
    failure = audit_rows()[-1]
    assert failure["action"] == "login failure" and failure["client_ip"] == "2001:db8::1"
    assert orjson.loads(failure["details"]) == {"username": "ops", "reason": "login_not_allowed"}
    assert sign_in(station, "198.51.100.20").status_code == 200
    assert sign_in(station, "::ffff:198.51.100.21").status_code == 200, "mapped is IPv4"


def test_refused_before_the_password_is_checked(station: Station, admin: SignedIn) -> None:
    allow(admin, ADMIN_IP)
    wrong = station.client.simulate_post(
        "/auth/login", json={"username": "nobody", "password": "x"}, remote_addr=OUTSIDER
    )
    assert wrong.status_code == 403 and wrong.json["error"]["code"] == "login_not_allowed"
    form = station.client.simulate_post(
        "/auth/login",
        body="username=nobody&password=x",
        headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"},
        remote_addr=OUTSIDER,
    )
    assert form.status_code == 403 and "login_not_allowed" in form.text


def test_client_address_follows_the_one_hop_rule(station: Station, admin: SignedIn) -> None:
    station.add_user("ops", "operator")
    allow(admin, "198.51.100.0/24")
    proxied = sign_in(station, "127.0.0.1", headers={"X-Forwarded-For": "198.51.100.20"})
    assert proxied.status_code == 200
    left_only = sign_in(
        station, "127.0.0.1", headers={"X-Forwarded-For": f"198.51.100.20, {OUTSIDER}"}
    )
    assert left_only.status_code == 403, "a client-written left entry does not count"
    spoofed = sign_in(station, OUTSIDER, headers={"X-Forwarded-For": "198.51.100.20"})
    assert spoofed.status_code == 403, "an untrusted peer is judged by its own address"


def test_disabled_or_expired_allowlist_ends_the_mode(station: Station, admin: SignedIn) -> None:
    station.add_user("ops", "operator")
    entry = allow(admin, ADMIN_IP, duration_minutes=10)
    assert sign_in(station, OUTSIDER).status_code == 403
    station.clock.advance(minutes=11)
    assert sign_in(station, OUTSIDER).status_code == 200, "expired: no longer in force"
    renewed = admin.request(
        "PATCH",
        f"{PATH}/{entry['id']}",
        json={"active": True, "expires_at": None},
        remote_addr=ADMIN_IP,
    )
    assert renewed.status_code == 200, renewed.text
    assert sign_in(station, OUTSIDER).status_code == 403
    off = admin.request(
        "PATCH", f"{PATH}/{entry['id']}", json={"active": False}, remote_addr=ADMIN_IP
    )
    assert off.status_code == 200
    assert sign_in(station, OUTSIDER).status_code == 200
    listed = admin.request("GET", PATH, remote_addr=ADMIN_IP).json
    assert listed["allowlist_mode"] is False
