"""Signed-in pages of the alert store: active alerts, history with filters, one alert."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import falcon

from alertstation.alerts import lifecycle
from alertstation.alerts.area import explain_in_words
from alertstation.alerts.boundary.detail import alert_detail
from alertstation.alerts.codes import alert_codes_of
from alertstation.alerts.lifecycle import CodeState
from alertstation.alerts.resources import (
    AREAS,
    SEVERITIES,
    SORTS,
    STATUSES,
    AlertFilter,
    event_names,
    get_alert,
    match_of,
    read_filter,
    search_alerts,
    vtec_of,
)
from alertstation.alerts.service import get_alert_settings
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


def _noun(event: str) -> str:
    """Return what to call an alert in a sentence: ``warning``, ``watch``... or ``alert``."""
    last = event.strip().rsplit(" ", 1)[-1].lower()
    return last if last in {"warning", "watch", "advisory", "statement", "emergency"} else "alert"


# The words the alert list's filters show for each value (the values travel in the URL).
STATE_LABELS = {
    "active": "Active",
    "expired": "Expired",
    "cancelled": "Cancelled",
    "superseded": "Superseded",
    "all": "Any state",
}
AREA_LABELS = {"": "Anywhere", "in": "In the broadcast area", "out": "Outside the broadcast area"}
SORT_LABELS = {
    "newest": "Newest first",
    "oldest": "Oldest first",
    "expires": "Expiring soonest",
    "severity": "Most severe first",
    "event": "Event, A to Z",
}


def severity_class(severity: str | None) -> str:
    """Return the CSS class suffix of a CAP severity: ``extreme`` ... ``unknown``."""
    return severity.lower() if severity in SEVERITIES else "unknown"


class ActiveAlertsPage:
    """GET /alerts: the alert list (active alerts unless filtered); alerts.js keeps it current.

    The filters (state, severity, area, event) and the sort are query arguments, so the URL
    holds them: a reload, a bookmark or a shared link shows the same list.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        now = self._station.clock()
        wanted = read_filter(req)
        if req.get_param("limit") is None:
            wanted = dataclasses.replace(wanted, limit=ACTIVE_PAGE_LIMIT)
        total, items = _rows(self._station, wanted, now)
        with self._station.engine.connect() as conn:
            events = event_names(conn)
        filtered = wanted.query_args(limit="", offset="")

        def sort_href(sort: str) -> str:
            """Return the address of this list in another order (the filters kept)."""
            return "/alerts?" + urlencode(wanted.query_args(sort=sort, limit="", offset=""))

        self._station.templates.page(
            req, resp, "alerts.html", total=total, items=items, when=when,
            page_limit=wanted.limit, wanted=wanted, events=events,
            statuses=STATUSES, state_labels=STATE_LABELS,
            severities=SEVERITIES, areas=("", *AREAS), area_labels=AREA_LABELS,
            sorts=SORTS, sort_labels=SORT_LABELS, severity_class=severity_class,
            filtered=filtered != {"status": "active"}, sort_href=sort_href,
            api_query=urlencode(wanted.query_args(offset="")),
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
            codes, remaining = found.codes, found.remaining
            settings = get_alert_settings(conn)
            vtec = vtec_of(conn, alert_id)
            detail = alert_detail(conn, row)
        match = match_of(row, codes, remaining, settings)
        inside = {alert_code for _, alert_code in match["pairs"]}
        named = [
            {
                "code": code,
                "name": self._name(code),
                "inside": code in inside,
                "state": _code_state(found.ended.get(code)),
                "ended_at": _ended_at(found.ended.get(code)),
            }
            for code in codes
        ]
        why = explain_in_words(
            station.zones, settings.zone_codes, codes, match, _noun(row.event or "")
        )
        station.templates.page(
            req,
            resp,
            "alerts_detail.html",
            alert=row,
            codes=named,
            remaining_codes=found.remaining,
            ended_codes=found.ended,
            match=match,
            why=why,
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


def _code_state(ended: CodeState | None) -> str:
    """Say how one code of an alert stands: in force, or how it ended."""
    return "in force" if ended is None else ended.state


def _ended_at(ended: CodeState | None) -> datetime | None:
    """Return when one code of an alert ended (None while it is in force)."""
    return None if ended is None else ended.ended_at
