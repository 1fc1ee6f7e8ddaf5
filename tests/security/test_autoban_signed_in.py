"""Probe URLs asked by signed-in users do not ban their address (finding 6)."""

from __future__ import annotations

from typing import Any

import falcon.testing
from sqlalchemy import Engine, select

from alertstation.auth.sessions import COOKIE_NAME
from alertstation.security.autoban.tables import security_events
from alertstation.security.bans.tables import ip_filters
from tests.support import StationHarness as Station

OFFICE = "198.51.100.40"  # an operator's office, behind one NAT address
SCANNER = "203.0.113.66"


def get(station: Station, address: str, path: str, **kw: Any) -> falcon.testing.Result:
    return station.client.simulate_get(path, remote_addr=address, **kw)


def banned(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        query = select(ip_filters.c.value).where(ip_filters.c.kind == "blocklist")
        return list(conn.execute(query).scalars())


def probes(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        query = select(security_events.c.address).where(
            security_events.c.kind == "malicious_request"
        )
        return list(conn.execute(query).scalars())


def test_probe_urls_with_a_valid_session_do_not_count(station: Station, engine: Engine) -> None:
    station.add_user("ops", "operator")
    ops = station.sign_in("ops", remote_addr=OFFICE)
    for path in ("/.env", "/wp-login.php", "/.git/config", "/phpmyadmin/"):
        answer = get(station, OFFICE, path, cookies={COOKIE_NAME: ops.cookie})
        assert answer.status_code == 404, (path, answer.text)
    assert banned(engine) == [] and probes(engine) == []
    assert ops.request("GET", "/auth/session", remote_addr=OFFICE).status_code == 200


def test_cookieless_probes_from_an_address_with_a_live_session_do_not_count(
    station: Station, engine: Engine
) -> None:
    """``<img src=/.env>`` on another site: the browser sends no SameSite=Lax cookie."""
    station.add_user("ops", "operator")
    ops = station.sign_in("ops", remote_addr=OFFICE)
    for _ in range(4):
        assert get(station, OFFICE, "/.env").status_code == 404
    assert banned(engine) == []
    assert ops.request("GET", "/auth/session", remote_addr=OFFICE).status_code == 200


def test_a_forged_or_ended_session_does_not_exempt_probes(station: Station, engine: Engine) -> None:
    station.add_user("ops", "operator")
    ops = station.sign_in("ops", remote_addr=OFFICE)
    ops.request("POST", "/auth/logout", remote_addr=OFFICE)
    token, signature = ops.cookie.split(".")
    forged = f"{token[:-1]}{'B' if token[-1] == 'A' else 'A'}.{signature}"
    assert get(station, SCANNER, "/.env", cookies={COOKIE_NAME: ops.cookie}).status_code == 404
    assert get(station, SCANNER, "/.env", cookies={COOKIE_NAME: forged}).status_code == 404
    third = get(station, SCANNER, "/wp-login.php", cookies={COOKIE_NAME: ops.cookie})
    assert third.status_code == 403 and third.json["error"]["code"] == "banned"
    assert banned(engine) == [SCANNER]
    # The office's session ended, so its address is no longer exempt either.
    for _ in range(3):
        last = get(station, OFFICE, "/.env")
    assert last.status_code == 403 and sorted(banned(engine)) == sorted([SCANNER, OFFICE])


def test_an_expired_session_does_not_exempt_probes(station: Station, engine: Engine) -> None:
    station.add_user("ops", "operator")
    ops = station.sign_in("ops", remote_addr=OFFICE)
    station.clock.advance(hours=13)  # past the 12-hour lifetime
    for _ in range(3):
        last = get(station, OFFICE, "/.env", cookies={COOKIE_NAME: ops.cookie})
    assert last.status_code == 403 and banned(engine) == [OFFICE]
