"""Serve the alert store as JSON: the public alert list and the admin actions on the store.

Also the queries the alert pages share (``alertstation.alerts.views``). Every admin action is
audited and bumps the ``alerts`` generation in its transaction. Broadcast state and system
status are answered by ``alertstation.alerts.broadcast``.
Routes are declared in ``alertstation.alerts.routes``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import falcon
from sqlalchemy import (
    Connection,
    Row,
    case,
    delete,
    exists,
    false,
    func,
    or_,
    select,
    true,
    update,
)

from alertstation.alerts import lifecycle
from alertstation.alerts.broadcast import BroadcastState
from alertstation.alerts.codes import AlertCodes, alert_codes_of, end_codes
from alertstation.alerts.explain import explain_match
from alertstation.alerts.ingest.replay import replay
from alertstation.alerts.matching import encode_code
from alertstation.alerts.service import AlertSettings, get_alert_settings
from alertstation.alerts.store import GENERATION, expire_due
from alertstation.alerts.tables import (
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)
from alertstation.alerts.vtec import Vtec
from alertstation.audit.actor import Actor
from alertstation.audit.ledger import ALERT_DELETED, CONFIG_UPDATED, NOTHING_DELETED
from alertstation.context import Station
from alertstation.db import bump_generation
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid, NotFound
from alertstation.http.bodies import json_object

STATUSES = ("active", *[s for s in lifecycle.STATES if s != lifecycle.ACTIVE], "all")
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
ENDED_STATES = (lifecycle.EXPIRED, lifecycle.CANCELLED, lifecycle.SUPERSEDED)
DEFAULT_KEEP_DAYS = 30
_A = cap_alerts.c
# CAP severities, most severe first; the list's severity filter and sort use them.
SEVERITIES = ("Extreme", "Severe", "Moderate", "Minor", "Unknown")
# The area filter: in the broadcast area, outside it, or either (empty).
AREAS = ("in", "out")
# How a listing can be ordered, by name; the first is the default.
SORTS = ("newest", "oldest", "expires", "severity", "event")

log = logging.getLogger("alertstation.alerts")


@dataclass(frozen=True)
class AlertFilter:
    """Hold the filters of an alert listing: status, severity, area, event, code, since, sort
    and the page."""

    status: str = "active"
    event: str = ""
    code: str = ""
    since: datetime | None = None
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    severity: str = ""
    area: str = ""
    sort: str = SORTS[0]

    def query_args(self, **override: Any) -> dict[str, str]:
        """Return the filters as query-string arguments (empty ones and the default sort left
        out)."""
        values = {
            "status": self.status,
            "severity": self.severity,
            "area": self.area,
            "event": self.event,
            "code": self.code,
            "since": self.since.isoformat() if self.since else "",
            "sort": "" if self.sort == SORTS[0] else self.sort,
            "limit": str(self.limit),
            "offset": str(self.offset),
        }
        values.update({key: str(value) for key, value in override.items()})
        return {key: value for key, value in values.items() if value}


def parse_time(text: str, field: str) -> datetime:
    """Parse an ISO 8601 time (naive means UTC); 422 naming ``field`` otherwise."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as ex:
        raise Invalid(f"{field} must be an ISO 8601 time", field=field) from ex
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def read_filter(req: falcon.Request, default_status: str = "active") -> AlertFilter:
    """Read the listing filters from the query string; 422 naming a bad one."""
    status = (req.get_param("status") or req.get_param("state") or default_status).lower()
    if status not in STATUSES:
        raise Invalid(f"status must be one of {', '.join(STATUSES)}", field="status")
    code = (req.get_param("code") or "").strip().upper()
    if code:
        try:
            encode_code(code)
        except ValueError as ex:
            raise Invalid(str(ex), field="code") from ex
    since_text = req.get_param("since") or ""
    event = (req.get_param("event") or "").strip()
    if len(event) > 200:
        raise Invalid("event must be at most 200 characters", field="event")
    severity = (req.get_param("severity") or "").strip().capitalize()
    if severity and severity not in SEVERITIES:
        raise Invalid(f"severity must be one of {', '.join(SEVERITIES)}", field="severity")
    area = (req.get_param("area") or "").strip().lower()
    if area and area not in AREAS:
        raise Invalid("area must be in (the broadcast area) or out (outside it)", field="area")
    sort = (req.get_param("sort") or SORTS[0]).strip().lower()
    if sort not in SORTS:
        raise Invalid(f"sort must be one of {', '.join(SORTS)}", field="sort")
    return AlertFilter(
        status=status,
        event=event,
        code=code,
        since=parse_time(since_text, "since") if since_text.strip() else None,
        limit=req.get_param_as_int("limit", min_value=1, max_value=MAX_LIMIT) or DEFAULT_LIMIT,
        offset=req.get_param_as_int("offset", min_value=0) or 0,
        severity=severity,
        area=area,
        sort=sort,
    )


def _order(sort: str) -> list[Any]:
    """Return the ORDER BY of a listing sort; every order ends on the id, so pages are stable."""
    newest = [_A.sent.desc(), _A.id.desc()]
    if sort == "oldest":
        return [_A.sent.asc(), _A.id.asc()]
    if sort == "expires":  # soonest first, alerts without an expiry last
        return [case((_A.expires.is_(None), 1), else_=0), _A.expires.asc(), *newest]
    if sort == "severity":  # Extreme first, no or unknown severity last
        rank = case(
            *[(_A.severity == name, index) for index, name in enumerate(SEVERITIES)],
            else_=len(SEVERITIES),
        )
        return [rank, *newest]
    if sort == "event":  # by event name, A to Z, then newest first
        return [func.lower(func.coalesce(_A.event, _A.event_code, "")), *newest]
    return newest


def search_alerts(conn: Connection, wanted: AlertFilter, now: datetime) -> tuple[int, list[Row]]:
    """Return (total matching, one page of rows in the filter's order) for a filter at ``now``."""
    conditions: list[Any] = []
    if wanted.status == "active":
        conditions += [_A.state == lifecycle.ACTIVE, or_(_A.expires.is_(None), _A.expires > now)]
    elif wanted.status != "all":
        conditions.append(_A.state == wanted.status)
    if wanted.event:
        conditions.append(
            or_(
                _A.event_code == wanted.event.upper(),
                func.lower(_A.event) == wanted.event.lower(),
            )
        )
    if wanted.code:
        g = cap_alert_geocodes.c
        conditions.append(
            exists().where(g.alert_id == _A.id, g.code_id == encode_code(wanted.code))
        )
    if wanted.since is not None:
        conditions.append(_A.sent >= wanted.since)
    if wanted.severity == "Unknown":
        conditions.append(or_(_A.severity.is_(None), _A.severity.notin_(SEVERITIES[:-1])))
    elif wanted.severity:
        conditions.append(_A.severity == wanted.severity)
    if wanted.area:
        conditions.append(_A.in_area.is_(true() if wanted.area == "in" else false()))
    total = conn.execute(select(func.count()).select_from(cap_alerts).where(*conditions))
    rows = conn.execute(
        select(cap_alerts)
        .where(*conditions)
        .order_by(*_order(wanted.sort))
        .limit(wanted.limit)
        .offset(wanted.offset)
    ).all()
    return int(total.scalar_one()), list(rows)


def event_names(conn: Connection, limit: int = 200) -> list[str]:
    """Return the distinct event names of stored alerts, A to Z (for the list's event filter)."""
    name = func.coalesce(_A.event, _A.event_code)
    rows = conn.execute(
        select(name).where(name.is_not(None)).group_by(name).order_by(name).limit(limit)
    )
    return [str(value) for value in rows.scalars()]


def codes_of(conn: Connection, ids: list[int]) -> dict[int, list[str]]:
    """Return the SAME and UGC codes of each alert, SAME first, each in document order."""
    return {alert_id: found.codes for alert_id, found in alert_codes_of(conn, ids).items()}


def match_of(
    row: Row, codes: list[str], remaining: list[str], settings: AlertSettings
) -> dict[str, Any]:
    """Return the ``match`` object of a stored alert under the station's broadcast area."""
    polygon_hit = bool(settings.match_polygons and row.match_geometry)
    return explain_match(settings.zone_codes, codes, remaining, polygon_hit).as_dict()


def vtec_of(conn: Connection, alert_id: int) -> list[str]:
    """Return the P-VTEC strings of one alert, in message order."""
    v = cap_alert_vtec.c
    rows = conn.execute(select(cap_alert_vtec).where(v.alert_id == alert_id).order_by(v.position))
    return [
        str(
            Vtec(
                row.product_class, row.action, row.office, row.phenomenon,
                row.significance, row.etn, row.begin, row.end,
            )
        )
        for row in rows
    ]  # fmt: skip


def get_alert(conn: Connection, alert_id: int) -> Row:
    """Return one stored alert row; 404 when there is none."""
    row = conn.execute(select(cap_alerts).where(_A.id == alert_id)).first()
    if row is None:
        raise NotFound(f"No alert {alert_id}.")
    return row


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def alert_as_dict(
    row: Row, codes: list[str] | AlertCodes, match: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Return an alert row as the JSON the API answers, with its ``match`` when given.

    ``remaining_codes`` are the codes still in force (``alerts.codes``); given a plain list,
    every code is taken as still in force.
    """
    held = codes if isinstance(codes, AlertCodes) else AlertCodes(list(codes), list(codes))
    found = {
        "id": row.id,
        "identifier": row.identifier,
        "sender": row.sender,
        "sent": _iso(row.sent),
        "event": row.event,
        "event_code": row.event_code,
        "headline": row.headline,
        "area_desc": row.area_desc,
        "severity": row.severity,
        "state": row.state,
        "expires": _iso(row.expires),
        "cancelled_at": _iso(row.cancelled_at),
        "codes": held.codes,
        "remaining_codes": held.remaining,
        "in_area": bool(row.in_area),
        "signature_status": row.signature_status,
        "signature_reason": row.signature_reason,
    }
    if match is not None:
        found["match"] = match
    return found


class AlertsApi:
    """GET /api/alerts: stored alerts (active by default), filtered and paged."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        wanted = read_filter(req)
        with self._station.engine.connect() as conn:
            total, rows = search_alerts(conn, wanted, self._station.clock())
            codes = alert_codes_of(conn, [row.id for row in rows])
            settings = get_alert_settings(conn)
        resp.media = {
            "total": total,
            "limit": wanted.limit,
            "offset": wanted.offset,
            "alerts": [
                alert_as_dict(
                    row,
                    codes[row.id],
                    match_of(row, codes[row.id].codes, codes[row.id].remaining, settings),
                )
                for row in rows
            ],
        }


class AlertApi:
    """GET /api/alerts/{id}: one stored alert with its VTEC strings and its ``match``."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response, alert_id: int) -> None:
        with self._station.engine.connect() as conn:
            row = get_alert(conn, alert_id)
            held = alert_codes_of(conn, [alert_id])[alert_id]
            settings = get_alert_settings(conn)
            vtec = vtec_of(conn, alert_id)
        found = alert_as_dict(row, held, match_of(row, held.codes, held.remaining, settings))
        resp.media = {**found, "vtec": vtec}


# --- administration ---------------------------------------------------------------------------


def _optional_body(req: falcon.Request) -> dict[str, Any]:
    """Return the JSON object body, or {} when the request has no body."""
    if not req.content_length:
        return {}
    return json_object(req)


class MarkExpired:
    """POST /admin/mark_expired: run the expiry sweep now."""

    def __init__(self, station: Station, broadcast: BroadcastState) -> None:
        self._station = station
        self._broadcast = broadcast

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            count = expire_due(conn, now=station.clock())
            fields = ["state"] if count else []
            station.ledger.record_config_update(
                conn, actor, "alerts.mark_expired", fields, refuse=True
            )
        self._broadcast.clear()
        resp.media = {"expired": count}


class ClearExpired:
    """POST /admin/clear_expired: delete ended alerts older than ``days`` (default 30)."""

    def __init__(self, station: Station, broadcast: BroadcastState) -> None:
        self._station = station
        self._broadcast = broadcast

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = _optional_body(req)
        days = body.get("days", DEFAULT_KEEP_DAYS)
        if not isinstance(days, int) or isinstance(days, bool) or not 0 <= days <= 36500:
            raise Invalid("days must be a whole number from 0 to 36500", field="days")
        station = self._station
        actor = Actor.from_request(req)
        cutoff = station.clock() - timedelta(days=days)
        with begin_write(station.engine) as conn:
            ids = list(
                conn.execute(
                    select(_A.id).where(_A.state.in_(ENDED_STATES), _A.updated_at < cutoff)
                ).scalars()
            )
            station.ledger.record_config_update(
                conn, actor, "alerts.clear_expired", ["alerts"] if ids else [], refuse=True
            )
            _delete_alerts(conn, ids)
        self._broadcast.clear()
        resp.media = {"deleted": len(ids), "days": days}


def _delete_alerts(conn: Connection, ids: list[int]) -> None:
    """Delete alerts with their geocodes, references, VTEC rows and queue entries; bump."""
    if not ids:
        return
    for table in (cap_alert_geocodes, cap_alert_refs, cap_alert_vtec, eas_forward_queue):
        conn.execute(delete(table).where(table.c.alert_id.in_(ids)))
    conn.execute(delete(cap_alerts).where(_A.id.in_(ids)))
    bump_generation(conn, GENERATION)


_SETTABLE_STATES = (lifecycle.EXPIRED, lifecycle.CANCELLED)


def read_patch(body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Return the requested changes (``expires``, ``state``) and the reason; 422 when bad."""
    unknown = sorted(set(body) - {"expires", "state", "reason"})
    if unknown:
        raise Invalid(f"unknown field {unknown[0]}", field=unknown[0])
    changes: dict[str, Any] = {}
    if "expires" in body:
        value = body["expires"]
        if value is not None and not isinstance(value, str):
            raise Invalid("expires must be an ISO 8601 time or null", field="expires")
        changes["expires"] = parse_time(value, "expires") if value else None
    if "state" in body:
        if body["state"] not in _SETTABLE_STATES:
            raise Invalid(f"state must be one of {', '.join(_SETTABLE_STATES)}", field="state")
        changes["state"] = body["state"]
    if not changes:
        raise Invalid("send expires and/or state", field="state")
    reason = body.get("reason", "")
    if not isinstance(reason, str) or len(reason) > 500:
        raise Invalid("reason must be a string of at most 500 characters", field="reason")
    return changes, reason.strip()


class AlertAdmin:
    """PATCH and DELETE /admin/alerts/{id}: change expiry or end an alert; delete one."""

    def __init__(self, station: Station, broadcast: BroadcastState) -> None:
        self._station = station
        self._broadcast = broadcast

    def on_patch(self, req: falcon.Request, resp: falcon.Response, alert_id: int) -> None:
        changes, reason = read_patch(json_object(req))
        station = self._station
        actor = Actor.from_request(req)
        now = station.clock()
        with begin_write(station.engine) as conn:
            before = get_alert(conn, alert_id)
            fields = sorted(changes)
            if "expires" in changes:
                conn.execute(
                    update(cap_alerts)
                    .where(_A.id == alert_id)
                    .values(expires=changes["expires"], updated_at=now)
                )
                if "state" not in changes:
                    replay(conn, [alert_id], now=now)
            if "state" in changes:
                cancelled_at = now if changes["state"] == lifecycle.CANCELLED else None
                conn.execute(
                    update(cap_alerts)
                    .where(_A.id == alert_id)
                    .values(state=changes["state"], cancelled_at=cancelled_at, updated_at=now)
                )
                fields = sorted({*fields, "cancelled_at"} if cancelled_at else fields)
                if changes["state"] != lifecycle.ACTIVE:
                    end_codes(conn, [alert_id], changes["state"], now)
                conn.execute(
                    update(eas_forward_queue)
                    .where(
                        eas_forward_queue.c.alert_id == alert_id,
                        eas_forward_queue.c.state == "pending",
                    )
                    .values(state="skipped", reason=f"{changes['state']} by an operator")
                )
            bump_generation(conn, GENERATION)
            row = get_alert(conn, alert_id)
            if row.state != before.state:
                fields = sorted({*fields, "state"})
            details = {"fields": fields, "reason": reason, "identifier": before.identifier}
            station.ledger.record_or_refuse(
                conn,
                actor,
                CONFIG_UPDATED,
                target=f"alert:{alert_id}",
                details=details,
            )
            codes = alert_codes_of(conn, [alert_id])[alert_id]
        self._broadcast.clear()
        resp.media = alert_as_dict(row, codes)

    def on_delete(self, req: falcon.Request, resp: falcon.Response, alert_id: int) -> None:
        station = self._station
        with begin_write(station.engine) as conn:
            row = get_alert(conn, alert_id)
            station.ledger.record_or_refuse(
                conn,
                Actor.from_request(req),
                ALERT_DELETED,
                target=f"cap_alert:{alert_id}",
                details={"ids": [alert_id], "identifier": row.identifier, "sender": row.sender},
                refusal=NOTHING_DELETED,
            )
            _delete_alerts(conn, [alert_id])
        self._broadcast.clear()
        resp.media = {"deleted": [alert_id]}
