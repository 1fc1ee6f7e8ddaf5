"""The overview's mirrored and pending counts against a real ``fail2ban-server``.

Uses the throwaway daemon of the host firewall bridge tests (own config directory, socket and a
no-op ban action), so nothing on the machine is touched.
"""

from __future__ import annotations

from typing import Any

from alertstation.security.hostban.fail2ban import parse_banned
from tests.security.conftest import ADMIN_IP
from tests.security.test_hostban_daemon import APP_JAIL, Daemon
from tests.security.test_hostban_daemon import daemon as daemon  # noqa: F401 - the fixture
from tests.support import SignedIn
from tests.support import StationHarness as Station


def ban(who: SignedIn, value: str) -> None:
    answer = who.request(
        "POST", "/security/ip-filters", json={"value": value}, remote_addr=ADMIN_IP
    )
    assert answer.status_code == 201, answer.text


def firewall(who: SignedIn) -> tuple[dict[str, Any], dict[str, Any]]:
    report = who.request("GET", "/security/overview", remote_addr=ADMIN_IP).json
    return report["enforcement"]["host_firewall"], report["metrics"]


def test_overview_counts_what_the_jail_holds(
    station: Station, admin: SignedIn, daemon: Daemon
) -> None:
    applied = admin.request(
        "POST", "/admin/hostban/configure", json=daemon.settings(mirror_enabled=True)
    )
    assert applied.status_code == 200, applied.text
    ban(admin, "203.0.113.7")
    ban(admin, "2001:db8::44")
    ban(admin, "192.0.2.0/24")  # ranges stay application-only
    assert parse_banned(daemon.client("get", APP_JAIL, "banned")) == [
        "2001:db8::44",
        "203.0.113.7",
    ]

    state, metrics = firewall(admin)
    assert state["state"] == "ok" and state["error"] is None
    assert (metrics["mirrorable"], metrics["mirrored"], metrics["firewall_pending"]) == (2, 2, 0)

    # The daemon goes away: the next ban cannot be mirrored and the overview says so.
    daemon.stop()
    ban(admin, "203.0.113.8")
    state, metrics = firewall(admin)
    assert state["state"] == "error" and state["error"]
    assert (metrics["mirrorable"], metrics["mirrored"], metrics["firewall_pending"]) == (3, 0, 3)
