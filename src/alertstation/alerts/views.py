"""Signed-in pages of the alert store: active alerts, history with filters, one alert."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import falcon

from alertstation.alerts import lifecycle
from alertstation.alerts.boundary.detail import alert_detail
from alertstation.alerts.codes import alert_codes_of
from alertstation.alerts.resources import (
    STATUSES,
    AlertFilter,
    get_alert,
    read_filter,
    search_alerts,
    vtec_of,
)
from alertstation.context import Station
from alertstation.zones.fips import describe_same_code

ACTIVE_PAGE_LIMIT = 200


def when(value: datetime | None) -> str:
    """Format a time for a page: ``2025-05-14 22:52 UTC``, or an em dash when absent."""
    if value is None:
        return "—"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def badges(row: Any, now: datetime) -> list[tuple[str, str]]:
    """Return (CSS class, text) badges of an alert's state, with the lift time when cancelled."""
    if row.state == lifecycle.CANCELLED:
        return [("cancelled", f"CANCELLED {when(row.cancelled_at)}".strip())]
    if row.state == lifecycle.SUPERSEDED:
        return [("superseded", "SUPERSEDED")]
    if row.state == lifecycle.EXPIRED or (row.expires is not None and row.expires <= now):
        return [("expired", "EXPIRED")]
    return [("active", "ACTIVE")]


SIGNATURE_BADGES = {
    "verified": ("verified", "Verified"),
    "unsigned": ("unsigned", "Unsigned"),
    "failed": ("failed", "Signature failed"),
}


def signature_badge(row: Any) -> tuple[str, str]:
    """Return the (CSS class, text) badge of an alert's signature check; unknown is failed."""
    return SIGNATURE_BADGES.get(row.signature_status, SIGNATURE_BADGES["failed"])


def _rows(station: Station, wanted: AlertFilter, now: datetime) -> tuple[int, list[dict[str, Any]]]:
    with station.engine.connect() as conn:
        total, rows = search_alerts(conn, wanted, now)
        codes = alert_codes_of(conn, [row.id for row in rows])
    items = [
        {
            "row": row, "codes": codes[row.id].codes,
            "remaining_codes": codes[row.id].remaining, "badges": badges(row, now),
        }
        for row in rows
    ]  # fmt: skip
    return total, items


class ActiveAlertsPage:
    """GET /alerts: the active alerts; alerts.js keeps the list current."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        now = self._station.clock()
        total, items = _rows(self._station, AlertFilter(limit=ACTIVE_PAGE_LIMIT), now)
        self._station.templates.page(
            req, resp, "alerts.html", total=total, items=items, when=when,
            page_limit=ACTIVE_PAGE_LIMIT,
        )  # fmt: skip


class AlertHistoryPage:
    """GET /alerts/history: every stored alert, filtered by state, event, code and time."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        wanted = read_filter(req, default_status="all")
        total, items = _rows(self._station, wanted, self._station.clock())
        previous = next_page = None
        if wanted.offset > 0:
            back = max(wanted.offset - wanted.limit, 0)
            previous = "/alerts/history?" + urlencode(wanted.query_args(offset=back))
        if wanted.offset + len(items) < total:
            ahead = wanted.offset + wanted.limit
            next_page = "/alerts/history?" + urlencode(wanted.query_args(offset=ahead))
        self._station.templates.page(
            req,
            resp,
            "alerts_history.html",
            wanted=wanted,
            statuses=STATUSES,
            total=total,
            items=items,
            when=when,
            previous=previous,
            next_page=next_page,
        )


class AlertDetailPage:
    """GET /alerts/{id}: texts, areas drawn over the boundary, codes, VTEC chain, raw message."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response, alert_id: int) -> None:
        station = self._station
        with station.engine.connect() as conn:
            row = get_alert(conn, alert_id)
            found = alert_codes_of(conn, [alert_id])[alert_id]
            codes = found.codes
            vtec = vtec_of(conn, alert_id)
            detail = alert_detail(conn, row)
        named = [(code, self._name(code)) for code in codes]
        station.templates.page(
            req,
            resp,
            "alerts_detail.html",
            alert=row,
            codes=named,
            remaining_codes=found.remaining,
            ended_codes=found.ended,
            vtec=vtec,
            detail=detail,
            badges=badges(row, station.clock()),
            signature=signature_badge(row),
            when=when,
        )

    def _name(self, code: str) -> str:
        zones = self._station.zones
        name = describe_same_code(zones, code) if code.isdigit() else zones.name_for(code)
        return name or "not in the zone catalog"
