"""What the bare peer apps answer, read the way a plain app would: one SQL query per page.

Both peers (``bare_falcon``, ``bare_flask``) call these with an engine on the station's own
database (``BENCH_DATABASE_URL``). The alert page is one query: the page's rows, each alert's
SAME codes and the codes still in force (correlated ``group_concat``s, in document order) and
the total (a window count); each alert's ``match`` comes from the library's pure rule
(``alerts.explain``) under the broadcast area read once at start. The broadcast state is a small
document of the same keys as the station's, its counts read once at start.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, create_engine, text

from alertstation.alerts.explain import explain_match
from alertstation.alerts.service import get_alert_settings

DEFAULT_LIMIT = 50  # the station's default page size (alertstation.alerts.resources)
MAX_LIMIT = 500

PAGE = text(
    """
    SELECT a.id, a.identifier, a.sender, a.sent, a.event, a.event_code, a.headline,
           a.area_desc, a.severity, a.state, a.expires, a.cancelled_at, a.in_area,
           a.signature_status, a.signature_reason, a.match_geometry,
           (SELECT group_concat(code_id) FROM (
               SELECT g.code_id FROM cap_alert_geocodes g
               WHERE g.alert_id = a.id ORDER BY g.position, g.code_id)) AS code_ids,
           (SELECT group_concat(code_id) FROM (
               SELECT g.code_id FROM cap_alert_geocodes g
               WHERE g.alert_id = a.id AND g.state = 'active'
               ORDER BY g.position, g.code_id)) AS remaining_ids,
           count(*) OVER () AS total
    FROM cap_alerts a
    WHERE a.state = 'active' AND (a.expires IS NULL OR a.expires > :now)
    ORDER BY a.sent DESC, a.id DESC
    LIMIT :limit OFFSET :offset
    """
)
COUNTS = text("SELECT count(*), coalesce(sum(in_area), 0) FROM cap_alerts WHERE state = 'active'")


def engine_from_env() -> Engine:
    """Return an engine on the database named by ``BENCH_DATABASE_URL``."""
    return create_engine(os.environ["BENCH_DATABASE_URL"])


def _iso(value: str | None) -> str | None:
    """Return a stored SQLite time (naive UTC text) as the ISO form the station answers."""
    if value is None:
        return None
    return datetime.fromisoformat(value).replace(tzinfo=UTC).isoformat()


def _sqlite_time(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _codes(ids: str | None) -> list[str]:
    return [f"{int(c):06d}" for c in ids.split(",")] if ids else []


class AlertsPage:
    """The alert page: the broadcast area read once at start, one query per page."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        with engine.connect() as conn:
            settings = get_alert_settings(conn)
        self._area, self._polygons = settings.zone_codes, settings.match_polygons

    def page(self, limit: int, offset: int) -> dict[str, Any]:
        """Return one page of active alerts, newest first, read with one SQL query."""
        return alerts_page(self._engine, limit, offset, self._area, self._polygons)


def alerts_page(
    engine: Engine, limit: int, offset: int, area: list[str], polygons: bool
) -> dict[str, Any]:
    """Return one page of active alerts, newest first, read with one SQL query."""
    now = _sqlite_time(datetime.now(UTC))
    with engine.connect() as conn:
        rows = conn.execute(PAGE, {"now": now, "limit": limit, "offset": offset}).all()
    return {
        "total": rows[0].total if rows else 0,
        "limit": limit,
        "offset": offset,
        "alerts": [
            {
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
                "codes": _codes(row.code_ids),
                "remaining_codes": _codes(row.remaining_ids),
                "in_area": bool(row.in_area),
                "signature_status": row.signature_status,
                "signature_reason": row.signature_reason,
                "match": explain_match(
                    area,
                    _codes(row.code_ids),
                    _codes(row.remaining_ids),
                    bool(polygons and row.match_geometry),
                ).as_dict(),
            }
            for row in rows
        ],
    }


class BroadcastDocument:
    """The broadcast state: counts read once at start, the document built per request."""

    def __init__(self, engine: Engine) -> None:
        with engine.connect() as conn:
            active, in_area = conn.execute(COUNTS).one()
        self.active, self.in_area = int(active), int(in_area)
        self.built_at = datetime.now(UTC)

    def state(self) -> dict[str, Any]:
        """Return the same keys the station answers."""
        return {
            "active": self.in_area > 0,
            "active_alerts": self.active,
            "in_area_alerts": self.in_area,
            "airing": False,
            "generation": 1,
            "timestamp": self.built_at.isoformat(),
            "stale": False,
            "on_air": False,
            "now_airing": None,
        }


def page_args(limit: str | None, offset: str | None) -> tuple[int, int]:
    """Return (limit, offset) from query arguments, the station's defaults when absent."""
    wanted = int(limit) if limit else DEFAULT_LIMIT
    return max(1, min(wanted, MAX_LIMIT)), max(0, int(offset) if offset else 0)
