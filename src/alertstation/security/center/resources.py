"""Security Center resources: the tabbed page, its overview and tab data, the legacy redirects.

Everything here only reads. The page's controls call the existing routes: the ban list
(``/security/ip-filters``, ``system.manage_users`` to change) and the host firewall bridge
(``/admin/hostban/*``, admin only). What a caller sees follows their account: the daemon's error
text in the overview is for admins only (others see the state ``error``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import falcon

from alertstation.context import Station
from alertstation.errors import Invalid
from alertstation.http.permissions import role_permissions
from alertstation.security.center import service as cs
from alertstation.security.geoip.lookup import locator_for
from alertstation.security.hostban import service as hostban_service

# Tab id (as in ?tab= and the hash) -> label, in the order shown.
TABS = {
    "traffic": "Traffic",
    "malicious-logins": "Malicious Logins",
    "banned-ips": "Banned IPs",
    "host-firewall": "Host Firewall",
}
DEFAULT_TAB = "traffic"
MANAGE_BANS = "system.manage_users"
ADMIN = "admin"


def _role(req: falcon.Request) -> str:
    user = getattr(req.context, "user", None)
    return str(getattr(user, "role", ""))


def is_admin(req: falcon.Request) -> bool:
    """Tell whether the caller has the admin role (the host firewall routes need it)."""
    return _role(req) == ADMIN


def can_manage_bans(req: falcon.Request) -> bool:
    """Tell whether the caller may change the ban list."""
    return MANAGE_BANS in role_permissions(_role(req))


def _days(req: falcon.Request) -> int:
    """Read ``days`` (1 or 7, default 1); Invalid naming the field otherwise."""
    raw = req.get_param("days")
    if raw is None:
        return 1
    try:
        days = int(raw)
    except ValueError:
        days = 0
    if days not in cs.WINDOW_DAYS:
        raise Invalid("days must be 1 or 7", field="days")
    return days


def _with_location(items: list[dict[str, Any]], station: Station) -> list[dict[str, Any]]:
    """Add a ``location`` block where the location database resolves the address."""
    locate = locator_for(station.settings.data_dir).locate
    for item in items:
        location = locate(item["address"]) if item.get("address") else None
        if location is not None:
            item["location"] = location
    return items


class SecurityCenterPage:
    """GET /security/center: the tabbed page (its data is fetched by the page's script)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        tab = req.get_param("tab")
        days = req.get_param("days")
        self._station.templates.page(
            req,
            resp,
            "security_center.html",
            tabs=TABS,
            selected=tab if tab in TABS else DEFAULT_TAB,
            days=7 if days == "7" else 1,
            can_manage=can_manage_bans(req),
            is_admin=is_admin(req),
        )


class SecurityOverview:
    """GET /security/overview: Enforcement Status and Security Metrics (read-only).

    The host firewall counts come from a probe of the dedicated jail remembered for a minute
    (``JailProbeCache``), never from a daemon call per request.
    """

    def __init__(self, station: Station) -> None:
        self._station = station
        self._probes = cs.JailProbeCache()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        snapshot = station.bans.snapshot()
        with station.engine.connect() as conn:
            report = cs.overview(
                conn,
                station.clock(),
                gate_entries=None if snapshot is None else len(snapshot.table),
                hostban=hostban_service.load_settings(conn),
                probes=self._probes,
            )
        if not is_admin(req):
            report["enforcement"]["host_firewall"]["error"] = None
        report["viewer"] = {"admin": is_admin(req), "can_manage_bans": can_manage_bans(req)}
        resp.media = report


class SecurityTraffic:
    """GET /security/center/traffic?days=1|7: events per hour, top addresses, recent events."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        now = station.clock()
        window = cs.Window.ending(now, _days(req))
        with station.engine.connect() as conn:
            hours = cs.events_per_hour(conn, window)
            totals = cs.event_totals(conn, window, hours)
            top = cs.top_event_addresses(conn, window)
            recent = cs.recent_events(conn, window)
            banned = cs.ban_lookup(conn, now)
        for item in top:
            entry = banned(item["address"])
            item["banned"] = entry is not None
            item["banned_by"] = entry.value if entry else None
        resp.media = {
            "days": window.days,
            "since": window.start,
            "until": window.end,
            **totals,
            "hours": hours,
            "top_addresses": _with_location(top, station),
            "recent": recent,
            "recent_limit": cs.RECENT_LIMIT,
        }


class SecurityFailedLogins:
    """GET /security/center/logins?days=1|7: failed sign-ins, per address, with ban state."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        now = station.clock()
        window = cs.Window.ending(now, _days(req))
        with station.engine.connect() as conn:
            total = cs.count_failed_logins(conn, window)
            addresses = cs.count_failed_login_addresses(conn, window)
            by_address = cs.failed_logins_by_address(conn, window)
            recent = cs.recent_failed_logins(conn, window)
            banned = cs.ban_lookup(conn, now)
        for item in by_address:
            entry = banned(item["address"]) if item["address"] else None
            item["banned"] = entry is not None
            item["banned_by"] = entry.value if entry else None
        resp.media = {
            "days": window.days,
            "since": window.start,
            "until": window.end,
            "total": total,
            "addresses": addresses,
            "by_address": _with_location(by_address, station),
            "recent": recent,
            "recent_limit": cs.RECENT_LIMIT,
        }


class LegacyRedirect:
    """GET on an old path: 301 to its Security Center tab, keeping the other query parameters."""

    def __init__(self, tab: str) -> None:
        if tab not in TABS:
            raise ValueError(f"unknown Security Center tab {tab!r}")
        self._tab = tab

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        kept = [(name, value) for name, value in _query_pairs(req) if name != "tab"]
        query = urlencode([("tab", self._tab), *kept])
        raise falcon.HTTPMovedPermanently(f"/security/center?{query}")


def _query_pairs(req: falcon.Request) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for name, value in req.params.items():
        for item in value if isinstance(value, list) else [value]:
            pairs.append((name, str(item)))
    return pairs
