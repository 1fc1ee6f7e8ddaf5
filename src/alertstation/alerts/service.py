"""Alert settings, re-matching, batch import, the expiry sweep and the read queries.

Settings (zone codes, storage zone codes, forwarded SAME events, ``match_polygons``) live in
``alert_settings`` as JSON values under four keys; the station boundary is read beside them.
Changing the zone codes or ``match_polygons`` re-matches the whole store from its geocode ids
and stored geometry matches in the same transaction.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, Engine, Row, bindparam, or_, select, update

from alertstation.alerts import lifecycle
from alertstation.alerts.boundary.matching import combine
from alertstation.alerts.boundary.store import Boundary, load_boundary
from alertstation.alerts.matching import GeocodeMatcher, encode_code
from alertstation.alerts.store import GENERATION, Matchers, expire_due
from alertstation.alerts.tables import (
    alert_settings,
    cap_alert_geocodes,
    cap_alerts,
    eas_forward_queue,
)
from alertstation.db import bump_generation
from alertstation.db.engine import begin_write
from alertstation.db.types import utcnow

if TYPE_CHECKING:
    from alertstation.context import Station

log = logging.getLogger(__name__)

ZONE_CODES = "zone_codes"
STORAGE_ZONE_CODES = "storage_zone_codes"
FORWARD_EVENTS = "forward_events"
MATCH_POLYGONS = "match_polygons"


@dataclass(frozen=True)
class AlertSettings:
    """Hold the configured broadcast codes, storage codes and forwarded SAME event codes."""

    zone_codes: tuple[str, ...] = ()
    storage_zone_codes: tuple[str, ...] = ()
    forward_events: tuple[str, ...] = ()
    # A geometry-only match (polygon or circle touching the boundary) counts as in area.
    match_polygons: bool = False
    boundary: Boundary | None = field(default=None, repr=False)

    def matchers(self) -> Matchers:
        """Build the matchers ingest uses from these settings."""
        return Matchers(
            area=GeocodeMatcher(self.zone_codes),
            storage=GeocodeMatcher(self.storage_zone_codes),
            # Every event reaches the forwarding rules (eas.forward.rules), which decide.
            forward_events=None,
            boundary=self.boundary,
            match_polygons=self.match_polygons,
        )


def get_alert_settings(conn: Connection) -> AlertSettings:
    """Read the alert settings; missing keys read as empty lists."""
    rows = {r.key: r.value for r in conn.execute(select(alert_settings))}
    values = {
        key: tuple(json.loads(rows[key])) if key in rows else ()
        for key in (ZONE_CODES, STORAGE_ZONE_CODES, FORWARD_EVENTS)
    }
    match_polygons = bool(json.loads(rows[MATCH_POLYGONS])) if MATCH_POLYGONS in rows else False
    return AlertSettings(**values, match_polygons=match_polygons, boundary=load_boundary(conn))


def set_alert_settings(
    conn: Connection,
    *,
    zone_codes: Iterable[str] | None = None,
    storage_zone_codes: Iterable[str] | None = None,
    forward_events: Iterable[str] | None = None,
    match_polygons: bool | None = None,
) -> AlertSettings:
    """Validate and write the given settings (None keeps a value); re-match on a code change.

    Codes are normalised (upper case, no surrounding space); an invalid code or an event code
    that is not three letters or digits is a ValueError naming it, and nothing is written.
    """
    current = get_alert_settings(conn)
    new = AlertSettings(
        zone_codes=_codes(zone_codes) if zone_codes is not None else current.zone_codes,
        storage_zone_codes=(
            _codes(storage_zone_codes)
            if storage_zone_codes is not None
            else current.storage_zone_codes
        ),
        forward_events=(
            _events(forward_events) if forward_events is not None else current.forward_events
        ),
        match_polygons=(
            bool(match_polygons) if match_polygons is not None else current.match_polygons
        ),
        boundary=current.boundary,
    )
    now = utcnow()
    for key in (ZONE_CODES, STORAGE_ZONE_CODES, FORWARD_EVENTS, MATCH_POLYGONS):
        field_value = getattr(new, key)
        value = json.dumps(field_value if key == MATCH_POLYGONS else list(field_value))
        if getattr(new, key) == getattr(current, key):
            continue
        done = conn.execute(
            alert_settings.update()
            .where(alert_settings.c.key == key)
            .values(value=value, updated_at=now)
        ).rowcount
        if not done:
            conn.execute(alert_settings.insert().values(key=key, value=value, updated_at=now))
    codes_changed = (new.zone_codes, new.storage_zone_codes, new.match_polygons) != (
        current.zone_codes,
        current.storage_zone_codes,
        current.match_polygons,
    )
    if codes_changed:
        matchers = new.matchers()
        rematch_store(conn, matchers.area, matchers.storage, match_polygons=new.match_polygons)
    return new


def _codes(codes: Iterable[str]) -> tuple[str, ...]:
    if isinstance(codes, str):
        raise ValueError("zone codes must be a list of codes, not one string")
    found: list[str] = []
    for code in codes:
        encode_code(code)  # ValueError naming an invalid code
        found.append(code.strip().upper())
    return tuple(dict.fromkeys(found))


def _events(events: Iterable[str]) -> tuple[str, ...]:
    if isinstance(events, str):
        raise ValueError("forward events must be a list of SAME event codes, not one string")
    found: list[str] = []
    for event in events:
        text = event.strip().upper() if isinstance(event, str) else ""
        if len(text) != 3 or not text.isalnum() or not text.isascii():
            raise ValueError(f"{event!r} is not a three-character SAME event code")
        found.append(text)
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True, slots=True)
class ImportProblem:
    """Name a message that was skipped: where it came from and why.

    ``link`` is set for a feed entry that only links to its message (an ATOM index entry): not
    a failure, the poller fetches the link.
    """

    source: str
    reason: str
    link: str = ""


def expire_alerts(engine: Engine, *, now: datetime | None = None) -> int:
    """Run the expiry sweep in its own write transaction; return how many alerts expired."""
    with begin_write(engine) as conn:
        return expire_due(conn, now=now)


def expire_alerts_job(station: Station) -> None:
    """Mark expired alerts (the leader's 60-second job); log only when something changed."""
    count = expire_alerts(station.engine)
    if count:
        log.info("alert expiry: %d alert(s) expired", count)


def rematch_store(
    conn: Connection,
    matcher_area: GeocodeMatcher,
    matcher_storage: GeocodeMatcher,
    *,
    match_polygons: bool = False,
) -> int:
    """Re-match every stored alert from its geocode ids; update changed flags, return count.

    The broadcast area is matched by the codes still in force (all of them once none is); the
    storage area by every code the alert had.

    ``match_code`` is set from the broadcast-area codes; the stored ``match_geometry`` (kept by
    ``alerts.boundary.service.recalculate_intersections``) counts toward ``in_area`` only with
    ``match_polygons``. ``stored_area`` is set for alerts in the storage or the broadcast area
    or touching the boundary. Alerts are never deleted here: an out-of-area alert stays (it
    may have been imported on purpose).
    """
    a = cap_alerts.c
    alerts = conn.execute(
        select(a.id, a.in_area, a.stored_area, a.match_code, a.match_geometry).order_by(a.id)
    ).all()
    if not alerts:
        return 0
    g = cap_alert_geocodes.c
    codes = conn.execute(
        select(g.alert_id, g.code_id, g.state == lifecycle.ACTIVE).order_by(g.alert_id, g.code_id)
    ).all()
    ids = np.fromiter((row.id for row in alerts), dtype=np.int64, count=len(alerts))
    owners = np.fromiter((row[0] for row in codes), dtype=np.int64, count=len(codes))
    flat = np.fromiter((row[1] for row in codes), dtype=np.int32, count=len(codes))
    live = np.fromiter((bool(row[2]) for row in codes), dtype=np.bool_, count=len(codes))
    # An alert is matched by its codes still in force; one whose codes all ended, by all of them.
    has_live = np.zeros(len(alerts), dtype=np.bool_)
    has_live[np.searchsorted(ids, owners[live])] = True
    keep = live | ~has_live[np.searchsorted(ids, owners)]
    offsets = np.append(np.searchsorted(owners, ids, side="left"), len(owners)).astype(np.int64)
    in_storage = matcher_storage.match_encoded(flat, offsets)  # storage: every code it had
    owners, flat = owners[keep], flat[keep]
    offsets = np.append(np.searchsorted(owners, ids, side="left"), len(owners)).astype(np.int64)
    by_code = matcher_area.match_encoded(flat, offsets)
    changes = []
    for row, code_hit, storage_hit in zip(alerts, by_code, in_storage, strict=True):
        match = combine(
            by_code=bool(code_hit),
            by_geometry=bool(row.match_geometry),
            in_storage=bool(storage_hit),
            match_polygons=match_polygons,
        )
        flags = (match.in_area, match.stored_area, match.by_code)
        if flags != (row.in_area, row.stored_area, row.match_code):
            changes.append(
                {
                    "b_id": row.id,
                    "in_area": match.in_area,
                    "stored_area": match.stored_area,
                    "match_code": match.by_code,
                }
            )
    if changes:
        conn.execute(update(cap_alerts).where(a.id == bindparam("b_id")), changes)
        bump_generation(conn, GENERATION)
    return len(changes)


def list_alerts(
    conn: Connection, *, include_all: bool = False, now: datetime | None = None
) -> list[Row[Any]]:
    """Return stored alerts, newest first: the active ones only unless ``include_all``.

    Active means state active and not past ``expires`` (even before the sweep has run), so
    expired, cancelled and superseded alerts never show.
    """
    now = now or utcnow()
    a = cap_alerts.c
    query = select(cap_alerts).order_by(a.sent.desc(), a.id.desc())
    if not include_all:
        query = query.where(a.state == lifecycle.ACTIVE, or_(a.expires.is_(None), a.expires > now))
    return list(conn.execute(query).all())


def forward_queue(conn: Connection) -> list[Row[Any]]:
    """Return the forward queue, oldest first."""
    return list(conn.execute(select(eas_forward_queue).order_by(eas_forward_queue.c.id)).all())
