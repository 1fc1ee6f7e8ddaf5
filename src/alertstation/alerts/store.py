"""What the alert store shares: the matchers ingest uses, its results, key limits, expiry.

Ingest itself lives in ``alertstation.alerts.ingest``. Every function here works inside the
caller's transaction (open it with ``alertstation.db.engine.begin_write``) and bumps the
generation ``alerts`` whenever it changes ``cap_alerts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection, and_, select, tuple_, update

from alertstation.alerts import lifecycle
from alertstation.alerts.boundary.matching import AreaMatch, combine, touches_boundary
from alertstation.alerts.boundary.store import Boundary
from alertstation.alerts.matching import GeocodeMatcher
from alertstation.alerts.model import Alert
from alertstation.alerts.tables import (
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)
from alertstation.db import bump_generation
from alertstation.db.types import utcnow

GENERATION = "alerts"
#: Longest sender or identifier stored (the width of the key columns).
MAX_KEY_CHARS = 255
_EXPIRED = lifecycle.EXPIRED
_V = cap_alert_vtec.c
_KEY_COLUMNS = (_V.office, _V.phenomenon, _V.significance, _V.etn, _V.year)
ChainKey = tuple[str, str, str, int, int]


@dataclass(frozen=True)
class Matchers:
    """Hold what ingest matches against: broadcast area, storage area, forwarded events.

    With a station ``boundary``, alert polygons and circles are matched by geometry too; a
    geometry-only match counts as in area when ``match_polygons`` is on (docs/matching.md).
    """

    area: GeocodeMatcher
    storage: GeocodeMatcher
    forward_events: frozenset[str] | None = field(default_factory=frozenset)
    boundary: Boundary | None = None
    match_polygons: bool = False

    def classify(self, alert: Alert, geocodes: Sequence[str]) -> AreaMatch:
        """Return why the alert matches (code, geometry) and its in-area and stored flags."""
        return combine(
            by_code=self.area.matches(geocodes),
            by_geometry=touches_boundary(self.boundary, alert),
            in_storage=self.storage.matches(geocodes),
            match_polygons=self.match_polygons,
        )


@dataclass(frozen=True, slots=True)
class IngestResult:
    """Tell what ingest did with one alert: ``stored``, ``duplicate`` or ``ignored``."""

    identifier: str
    outcome: str
    alert_id: int | None = None
    state: str | None = None
    queued: bool = False
    in_area: bool = False


def _check_keys(alert: Alert) -> None:
    """Raise ValueError when a sender or identifier (own or referenced) is too long to store."""
    names = [alert.sender, alert.identifier]
    names += [part for ref in alert.references for part in (ref.sender, ref.identifier)]
    for name in names:
        if len(name) > MAX_KEY_CHARS:
            raise ValueError(
                f"sender or identifier {name[:40]!r}... is {len(name)} characters, "
                f"over the limit of {MAX_KEY_CHARS}"
            )


def _skip_ended(conn: Connection, ended: Sequence[int], reason: str) -> None:
    """Skip pending queue entries of ended alerts and of what they continued.

    That is the ended alerts, the alerts they reference and every non-active member of
    their VTEC chains: a superseded NEW waits while its event is live, never after it ended.
    """
    if not ended:
        return
    a = cap_alerts.c
    r = cap_alert_refs.c
    referenced = (
        select(a.id)
        .join(cap_alert_refs, and_(a.sender == r.ref_sender, a.identifier == r.ref_identifier))
        .where(r.alert_id.in_(ended))
    )
    keys = select(*_KEY_COLUMNS).where(_V.alert_id.in_(ended))
    chained = (
        select(_V.alert_id)
        .join(cap_alerts, a.id == _V.alert_id)
        .where(tuple_(*_KEY_COLUMNS).in_(keys), a.state != lifecycle.ACTIVE)
    )
    ids = (
        set(ended) | set(conn.execute(referenced).scalars()) | set(conn.execute(chained).scalars())
    )
    _skip_pending(conn, sorted(ids), reason)


def _skip_pending(conn: Connection, alert_ids: Sequence[int], reason: str) -> None:
    if alert_ids:
        conn.execute(
            update(eas_forward_queue)
            .where(
                eas_forward_queue.c.alert_id.in_(alert_ids),
                eas_forward_queue.c.state == "pending",
            )
            .values(state="skipped", reason=reason)
        )


def expire_due(conn: Connection, *, now: datetime | None = None) -> int:
    """Mark active alerts whose ``expires`` has passed as expired; bump only on a change."""
    now = now or utcnow()
    a = cap_alerts.c
    due = list(
        conn.execute(
            select(a.id).where(
                a.state == lifecycle.ACTIVE, a.expires.is_not(None), a.expires <= now
            )
        ).scalars()
    )
    if not due:
        return 0
    conn.execute(
        update(cap_alerts).where(a.id.in_(due)).values(state=lifecycle.EXPIRED, updated_at=now)
    )
    g = cap_alert_geocodes.c
    conn.execute(
        update(cap_alert_geocodes)
        .where(g.alert_id.in_(due), g.state == lifecycle.ACTIVE)
        .values(state=lifecycle.EXPIRED, ended_at=now)
    )
    _skip_ended(conn, due, "event ended before it aired")
    bump_generation(conn, GENERATION)
    return len(due)
