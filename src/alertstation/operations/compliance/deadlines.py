"""The RMT relay deadline (47 CFR 11.61): 60 minutes from the first reception, once per header.

:func:`track_deadlines` opens one ``rmt_deadlines`` row for each received RMT whose location
codes fall in the station's area (its state or counties), keyed by the header without the
sender's station id, so the same header heard on another source (or again) does not restart
it. :func:`settle_deadlines` finds the station's relay of each open one (an airing queue item
of result ``aired`` whose header is the same message under the station's id) and records
when it started airing and whether that was by the deadline (``met``); a deadline that passes
with nothing aired or airing is recorded missed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import Connection, insert, select, update

from alertstation.alerts.matching import GeocodeMatcher
from alertstation.alerts.service import get_alert_settings
from alertstation.audio.tables import received_eas_messages
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.tables import eas_archive
from alertstation.operations.compliance.tables import rmt_deadlines
from alertstation.same import SameHeader, message_key

RMT: Final[str] = "RMT"
#: The relay deadline of a Required Monthly Test (47 CFR 11.61(a)(1)).
DEADLINE: Final[timedelta] = timedelta(minutes=60)
#: How far back received messages are scanned for a new deadline (covers a worker outage).
SCAN_BACK: Final[timedelta] = timedelta(days=1)
AIRED: Final[str] = "aired"
AIRING: Final[str] = "airing"

_R = received_eas_messages.c
_D = rmt_deadlines.c
_Q = eas_airing_queue.c
_A = eas_archive.c


@dataclass(frozen=True)
class DeadlineOutcome:
    """A deadline decided this round: met (aired by ``due_at``) or missed."""

    id: int
    header: str
    started_at: datetime
    due_at: datetime
    aired_at: datetime | None
    met: bool

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {
            "id": self.id,
            "header": self.header,
            "started_at": self.started_at.isoformat(),
            "due_at": self.due_at.isoformat(),
            "aired_at": self.aired_at.isoformat() if self.aired_at else None,
            "met": self.met,
        }


def in_station_area(conn: Connection, header: SameHeader) -> bool:
    """Tell whether a header's location codes include the station's state or counties."""
    try:
        return GeocodeMatcher(get_alert_settings(conn).zone_codes).matches(header.locations)
    except ValueError:
        return False


def track_deadlines(conn: Connection, now: datetime) -> list[int]:
    """Open a deadline for each in-area RMT received lately that has none; return their ids."""
    rows = conn.execute(
        select(_R.id, _R.source_id, _R.header, _R.received_at)
        .where(_R.event_code == RMT, _R.received_at >= now - SCAN_BACK, _R.received_at <= now)
        .order_by(_R.received_at, _R.id)
    ).all()
    if not rows:
        return []
    known = set(conn.execute(select(_D.message_key)).scalars())
    opened: list[int] = []
    for row in rows:
        try:
            header = SameHeader.parse(row.header)
        except ValueError:
            continue
        key = message_key(header)
        if key in known or not in_station_area(conn, header):
            continue
        known.add(key)
        result = conn.execute(
            insert(rmt_deadlines).values(
                message_key=key,
                header=row.header,
                received_id=row.id,
                source_id=row.source_id,
                started_at=row.received_at,
                due_at=row.received_at + DEADLINE,
            )
        )
        opened.append(int(result.inserted_primary_key[0]))
    return opened


def relay_airings(conn: Connection, key: str, since: datetime) -> list[Any]:
    """Return the airing queue items (aired or airing) of one message since ``since``."""
    return list(
        conn.execute(
            select(_Q.id, _Q.state, _Q.started_at)
            .join(eas_archive, _A.id == _Q.archive_id)
            .where(
                _A.header.startswith(key + "-", autoescape=True),
                _Q.state.in_((AIRED, AIRING)),
                _Q.started_at >= since,
            )
            .order_by(_Q.started_at)
        ).all()
    )


def settle_deadlines(conn: Connection, now: datetime) -> list[DeadlineOutcome]:
    """Record the relays of open deadlines; decide met or missed; return what was decided."""
    decided: list[DeadlineOutcome] = []
    rows = conn.execute(
        select(rmt_deadlines).where(
            _D.aired_at.is_(None), _D.started_at >= now - SCAN_BACK - DEADLINE
        )
    ).all()
    for row in rows:
        airings = relay_airings(conn, row.message_key, row.started_at)
        aired = next((a for a in airings if a.state == AIRED), None)
        if aired is not None:
            values: dict[str, Any] = {"aired_at": aired.started_at}
            if row.met is None:
                values["met"] = aired.started_at <= row.due_at
            conn.execute(update(rmt_deadlines).where(_D.id == row.id).values(**values))
            if row.met is None:
                decided.append(_outcome(row, aired.started_at, values["met"]))
            continue
        on_air_in_time = any(a.started_at <= row.due_at for a in airings)
        if row.met is None and now > row.due_at and not on_air_in_time:
            conn.execute(update(rmt_deadlines).where(_D.id == row.id).values(met=False))
            decided.append(_outcome(row, None, False))
    return decided


def _outcome(row: Any, aired_at: datetime | None, met: bool) -> DeadlineOutcome:
    return DeadlineOutcome(row.id, row.header, row.started_at, row.due_at, aired_at, met)


def recent_deadlines(conn: Connection, limit: int = 20) -> list[dict[str, Any]]:
    """Return the newest deadlines, as JSON."""
    rows = conn.execute(select(rmt_deadlines).order_by(_D.started_at.desc()).limit(limit)).all()
    return [deadline_as_dict(row) for row in rows]


def deadline_as_dict(row: Any) -> dict[str, Any]:
    """Return one ``rmt_deadlines`` row as JSON."""
    return {
        "id": row.id,
        "header": row.header,
        "source_id": row.source_id,
        "received_id": row.received_id,
        "started_at": row.started_at.isoformat(),
        "due_at": row.due_at.isoformat(),
        "aired_at": row.aired_at.isoformat() if row.aired_at else None,
        "met": row.met,
    }
