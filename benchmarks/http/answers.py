"""Check, before anything is timed, that every server answers both routes alike.

Each server must answer 200 with JSON of the same shape; the alert page must hold the same
alerts (the same ids, in order, and the same fields); the broadcast state the same counts. The
station's answer must carry what its middleware adds (a request id, the security headers), so a
run that bypassed the middleware could not pass.
"""

from __future__ import annotations

from typing import Any

BROADCAST = "/api/broadcast/state"
ALERTS = "/api/alerts"
ROUTES = {"broadcast_state": BROADCAST, "alerts": ALERTS}
MIDDLEWARE_HEADERS = ("x-request-id", "x-content-type-options", "x-frame-options")
# Differ by nature between two processes: when each read its snapshot and which generation.
VOLATILE = frozenset({"timestamp", "generation"})


def check_station_headers(headers: dict[str, str]) -> None:
    """Fail unless the answer went through the station's middleware (names in lower case)."""
    missing = [name for name in MIDDLEWARE_HEADERS if not headers.get(name)]
    if missing:
        raise AssertionError(f"the station's answer lacks {missing}: middleware bypassed?")


def check_alike(route: str, station: Any, peer: Any, peer_name: str) -> None:
    """Fail unless ``peer`` answered ``route`` with a body equivalent to the station's."""
    if route == ALERTS:
        if station["alerts"] == [] or len(station["alerts"]) != station["limit"]:
            raise AssertionError(f"the station's page is not full: {len(station['alerts'])}")
        ids = [alert["id"] for alert in station["alerts"]]
        peer_ids = [alert["id"] for alert in peer["alerts"]]
        if ids != peer_ids:
            raise AssertionError(f"{peer_name} pages other alerts: {peer_ids[:5]} vs {ids[:5]}")
        if station != peer:
            raise AssertionError(f"{peer_name}'s alert page differs from the station's")
        return
    if station.keys() != peer.keys():
        raise AssertionError(f"{peer_name}: keys {sorted(peer)} vs {sorted(station)}")
    differ = [k for k in station if k not in VOLATILE and station[k] != peer[k]]
    if differ:
        raise AssertionError(f"{peer_name}'s broadcast state differs in {differ}")
