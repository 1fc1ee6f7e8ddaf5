"""Audio alerts: silence, clipping and source_down, opened and ended by the monitor.

An alert is *open* until an operator resolves it (acknowledging it leaves it open); ``ended_at``
is when the condition itself stopped, written by the monitor. The monitor keeps at most one
alert per source and kind whose condition is still going (``ended_at`` null, not resolved).
``resolve_all`` resolves every open alert in one UPDATE: there may be tens of thousands.
Resolved alerts are kept for the audio-alert retention days saved on the settings page, then
:func:`prune_job` (a worker job) deletes them; open alerts are never pruned.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import Connection, Row, delete, func, insert, select, update

from alertstation.audio.tables import ERROR_WIDTH, audio_alerts, audio_sources
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.notifications import notify
from alertstation.notifications.events import AUDIO_ALARM
from alertstation.settings_admin.sections import retention_policy

log = logging.getLogger(__name__)

#: How often the worker prunes resolved alerts, in seconds.
PRUNE_INTERVAL: Final[float] = 3600.0

KINDS = ("silence", "clipping", "source_down")
#: The kinds that notify the ``audio_alarm`` channels (clipping stays in the app).
ALARM_KINDS: Final[frozenset[str]] = frozenset({"silence", "source_down"})
STATES = ("open", "resolved", "all")
DEFAULT_LIMIT, MAX_LIMIT = 50, 500
_A = audio_alerts.c


def open_alert(
    conn: Connection, source_id: int, kind: str, now: datetime, detail: str | None = None
) -> int | None:
    """Open an alert of ``kind`` for a source unless one is still going; return the new id."""
    if kind not in KINDS:
        raise ValueError(f"audio alert kind must be one of {', '.join(KINDS)}, not {kind!r}")
    going = conn.execute(
        select(_A.id).where(
            _A.source_id == source_id,
            _A.kind == kind,
            _A.ended_at.is_(None),
            _A.resolved_at.is_(None),
        )
    ).first()
    if going is not None:
        return None
    values = {"source_id": source_id, "kind": kind, "started_at": now}
    if detail:
        values["detail"] = detail[:ERROR_WIDTH]
    alert_id = int(conn.execute(insert(audio_alerts).values(**values)).inserted_primary_key[0])
    if kind in ALARM_KINDS:
        _notify_alarm(conn, source_id, kind, now, detail)
    return alert_id


def _notify_alarm(
    conn: Connection, source_id: int, kind: str, now: datetime, detail: str | None
) -> None:
    """Write the ``audio_alarm`` notification of a silence or a source gone down."""
    name = conn.execute(select(audio_sources.c.name).where(audio_sources.c.id == source_id))
    source = name.scalar() or f"source {source_id}"
    what = "is silent" if kind == "silence" else "is down"
    notify(
        conn,
        AUDIO_ALARM,
        subject=f"Audio alarm: {source} {what}",
        body=f"The audio source {source} {what} since {now:%Y-%m-%d %H:%M:%S} UTC."
        + (f"\n{detail}" if detail else ""),
        now=now,
    )


def end_alert(conn: Connection, source_id: int, kind: str, now: datetime) -> int:
    """Mark the going alert of ``kind`` of a source as ended at ``now``; return rows changed."""
    result = conn.execute(
        update(audio_alerts)
        .where(_A.source_id == source_id, _A.kind == kind, _A.ended_at.is_(None))
        .values(ended_at=now)
    )
    return int(result.rowcount or 0)


@dataclass(frozen=True)
class AlertPage:
    """One page of alerts, newest first, and the total matching."""

    total: int
    rows: list[Row[Any]]


def list_alerts(
    conn: Connection, state: str = "open", limit: int = DEFAULT_LIMIT, offset: int = 0
) -> AlertPage:
    """Return a page of alerts in ``state`` (open, resolved or all), newest first."""
    if state not in STATES:
        raise ValueError(f"state must be one of {', '.join(STATES)}")
    conditions = []
    if state == "open":
        conditions.append(_A.resolved_at.is_(None))
    elif state == "resolved":
        conditions.append(_A.resolved_at.is_not(None))
    total = conn.execute(select(func.count()).select_from(audio_alerts).where(*conditions))
    rows = conn.execute(
        select(audio_alerts)
        .where(*conditions)
        .order_by(_A.started_at.desc(), _A.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return AlertPage(int(total.scalar_one()), list(rows.all()))


def get_alert(conn: Connection, alert_id: int) -> Row[Any]:
    """Return one alert or raise LookupError."""
    row = conn.execute(select(audio_alerts).where(_A.id == alert_id)).first()
    if row is None:
        raise LookupError(alert_id)
    return row


def acknowledge(conn: Connection, alert_id: int, username: str, now: datetime) -> bool:
    """Acknowledge an alert (it stays open); False when it was already acknowledged."""
    result = conn.execute(
        update(audio_alerts)
        .where(_A.id == alert_id, _A.acknowledged_at.is_(None))
        .values(acknowledged_by=username, acknowledged_at=now)
    )
    return bool(result.rowcount)


def resolve(conn: Connection, alert_id: int, username: str, now: datetime) -> bool:
    """Resolve one open alert; False when it was already resolved."""
    result = conn.execute(
        update(audio_alerts)
        .where(_A.id == alert_id, _A.resolved_at.is_(None))
        .values(resolved_by=username, resolved_at=now)
    )
    return bool(result.rowcount)


def resolve_all(conn: Connection, username: str, now: datetime) -> int:
    """Resolve every open alert in one UPDATE; return how many."""
    result = conn.execute(
        update(audio_alerts)
        .where(_A.resolved_at.is_(None))
        .values(resolved_by=username, resolved_at=now)
    )
    return int(result.rowcount or 0)


def prune_resolved(conn: Connection, before: datetime) -> int:
    """Delete the alerts resolved before ``before`` in one DELETE; return how many."""
    result = conn.execute(
        delete(audio_alerts).where(_A.resolved_at.is_not(None), _A.resolved_at < before)
    )
    return int(result.rowcount or 0)


def prune_expired(station: Station) -> int:
    """Delete resolved alerts older than the saved audio-alert retention; return how many."""
    now = station.clock()
    with begin_write(station.engine) as conn:
        days = retention_policy(conn).audio_alert_retention_days
        pruned = prune_resolved(conn, now - timedelta(days=days))
    if pruned:
        log.info("pruned %d audio alerts resolved more than %d days ago", pruned, days)
    return pruned


def prune_job(station: Station) -> None:
    """The worker job: :func:`prune_expired`."""
    prune_expired(station)


def alert_as_dict(row: Row[Any]) -> dict[str, Any]:
    """Return the JSON form of an alert."""
    return {
        "id": row.id,
        "source_id": row.source_id,
        "kind": row.kind,
        "detail": row.detail,
        "started_at": _iso(row.started_at),
        "ended_at": _iso(row.ended_at),
        "acknowledged_by": row.acknowledged_by,
        "acknowledged_at": _iso(row.acknowledged_at),
        "resolved_by": row.resolved_by,
        "resolved_at": _iso(row.resolved_at),
        "open": row.resolved_at is None,
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
