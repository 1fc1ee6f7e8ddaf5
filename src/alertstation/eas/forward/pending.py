"""The approval queue: messages a forwarding rule did not air at once.

A message whose rule says ``manual`` waits here for an operator; ``hold`` N waits N minutes
(``air_at``) and then airs unless an operator held or rejected it. An operator may:

* **Forward** it now: a CAP forward goes back on the forward queue (``pending``, queued now) for
  the forward job to air with every airing-time check; a received message airs at once;
* **Hold** it: the countdown stops (``held``, ``air_at`` cleared) until Forward or Reject;
* **Reject** it: it never airs (a CAP forward's queue entry becomes ``skipped``).

Each act is audited (``eas.pending.forward`` / ``.hold`` / ``.reject``) in the transaction
that makes it. A waiting or held message whose valid time passes (``expires_at``: the alert's
expiry, or a received header's issue time plus purge) is dropped as ``expired`` by
:func:`run_due` (the forward job calls it first) and never airs; a CAP forward whose alert was
cancelled, ended or left the broadcast area meanwhile is ``withdrawn`` with the reason.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import Connection, select, update

from alertstation.alerts.airing_guard import refusal
from alertstation.alerts.tables import eas_forward_queue
from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.airing import settings as airing_settings
from alertstation.eas.airing.queue import event_name
from alertstation.eas.forward.config import MAX_AGE_LIMIT, get_forward_settings
from alertstation.eas.forward.relay import air_received, recorded_audio
from alertstation.eas.forward.rules import HOLD, Decision
from alertstation.eas.forward.tables import eas_pending
from alertstation.eas.log import record as station_log
from alertstation.eas.log import record_entry
from alertstation.eas.plain import PlainLanguage
from alertstation.errors import Conflict, NotFound
from alertstation.notifications import notify
from alertstation.notifications.events import PENDING_APPROVAL
from alertstation.same import SameHeader

log = logging.getLogger("alertstation.eas")

WAITING: Final[str] = "waiting"
HELD: Final[str] = "held"
FORWARDED: Final[str] = "forwarded"
REJECTED: Final[str] = "rejected"
EXPIRED: Final[str] = "expired"
WITHDRAWN: Final[str] = "withdrawn"
OPEN_STATES: Final[tuple[str, str]] = (WAITING, HELD)
#: The forward-queue state of a CAP forward that waits here.
AWAITING: Final[str] = "awaiting"
ACTIONS: Final[tuple[str, ...]] = ("forward", "hold", "reject")
HOLD_ACTOR: Final[str] = "hold"
AUDIT_PREFIX: Final[str] = "eas.pending."

_p = eas_pending.c
_q = eas_forward_queue.c


def park(
    conn: Connection,
    *,
    origin: str,
    source: str,
    header: str,
    event_code: str,
    decision: Decision,
    now: datetime,
    expires_at: datetime,
    queue_id: int | None = None,
    received_id: int | None = None,
    audio_path: str | None = None,
) -> int:
    """Put a message on the approval queue inside the caller's transaction; return its id."""
    minutes = decision.mode.minutes if decision.mode.mode == HOLD else None
    result = conn.execute(
        eas_pending.insert().values(
            origin=origin,
            source=source,
            queue_id=queue_id,
            received_id=received_id,
            header=header,
            event_code=event_code,
            audio_path=audio_path,
            rule=decision.rule,
            mode=decision.mode.mode,
            hold_minutes=minutes,
            state=WAITING,
            created_at=now,
            air_at=now + timedelta(minutes=minutes) if minutes else None,
            expires_at=expires_at,
        )
    )
    if queue_id is not None:
        conn.execute(
            update(eas_forward_queue)
            .where(_q.id == queue_id)
            .values(state=AWAITING, reason=f"awaiting approval ({decision.rule})")
        )
    item_id = int(result.inserted_primary_key[0])
    record_entry(
        conn,
        station_log.HELD,
        at=now,
        source=source,
        header=header,
        result=decision.mode.mode,
        details={
            "pending_id": item_id,
            "origin": origin,
            "rule": decision.rule,
            "hold_minutes": minutes,
            "expires_at": expires_at,
        },
    )
    waits = (
        f"airs at {now + timedelta(minutes=minutes):%H:%M} UTC unless held or rejected"
        if minutes
        else "waits for an operator"
    )
    notify(
        conn,
        PENDING_APPROVAL,
        subject=f"Awaiting approval: {event_name(header)} ({origin})",
        body=f"{header}\nFrom {source}, rule {decision.rule}: {waits}.\nQueue item {item_id}.",
        now=now,
    )
    return item_id


def valid_until(header: SameHeader, now: datetime) -> datetime:
    """Return a received header's end of validity: its issue time plus purge (year of ``now``)."""
    issued = header.issued_at(now.year)
    if issued > now + timedelta(days=1):  # issued late on 31 December, heard after midnight
        issued = header.issued_at(now.year - 1)
    return issued + header.purge


def released(conn: Connection, queue_id: int) -> bool:
    """Tell whether a CAP forward-queue entry was released from the approval queue."""
    return (
        conn.execute(
            select(_p.id).where(_p.queue_id == queue_id, _p.state == FORWARDED).limit(1)
        ).first()
        is not None
    )


def item_as_dict(row: Any, plain: PlainLanguage | None = None) -> dict[str, Any]:
    """Return the JSON form of an approval-queue item (``text`` is the plain-language text of
    its header, when ``plain`` is given)."""
    return {
        "id": row.id,
        "origin": row.origin,
        "source": row.source,
        "header": row.header,
        "event_code": row.event_code,
        "text": plain.text_or_none(row.header, near=row.created_at) if plain else None,
        "rule": row.rule,
        "mode": row.mode,
        "hold_minutes": row.hold_minutes,
        "state": row.state,
        "created_at": row.created_at.isoformat(),
        "air_at": row.air_at.isoformat() if row.air_at else None,
        "expires_at": row.expires_at.isoformat(),
        "decided_by": row.decided_by,
        "received_id": row.received_id,
    }


def list_open(conn: Connection) -> list[dict[str, Any]]:
    """Return what waits (waiting or held), the soonest to air first."""
    rows = conn.execute(
        select(eas_pending).where(_p.state.in_(OPEN_STATES)).order_by(_p.created_at, _p.id)
    ).all()
    plain = PlainLanguage.for_connection(conn)
    items = (item_as_dict(r, plain) for r in rows)
    return sorted(items, key=lambda i: (i["air_at"] is None, i["air_at"]))


def state_of_received(conn: Connection, received_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Return the approval-queue item of each received message that has one."""
    if not received_ids:
        return {}
    rows = conn.execute(
        select(eas_pending).where(_p.received_id.in_(received_ids)).order_by(_p.id)
    ).all()
    return {row.received_id: item_as_dict(row) for row in rows}


def _requeue(conn: Connection, queue_id: int | None, now: datetime) -> None:
    if queue_id is not None:
        conn.execute(
            update(eas_forward_queue)
            .where(_q.id == queue_id, _q.state == AWAITING)
            .values(state="pending", queued_at=now, reason="")
        )


def _skip(conn: Connection, queue_id: int | None, reason: str) -> None:
    if queue_id is not None:
        conn.execute(
            update(eas_forward_queue)
            .where(_q.id == queue_id, _q.state == AWAITING)
            .values(state="skipped", reason=reason)
        )


def act(station: Station, item_id: int, action: str, actor: Actor) -> dict[str, Any]:
    """Forward, hold or reject an item for ``actor``; audited; 404 unknown, 409 no longer open."""
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}")
    with begin_write(station.engine) as conn:
        now = station.clock()
        row = conn.execute(select(eas_pending).where(_p.id == item_id)).first()
        if row is None:
            raise NotFound(f"no pending message {item_id}")
        if row.state not in OPEN_STATES:
            raise Conflict(f"pending message {item_id} is already {row.state}", code="not_pending")
        if row.expires_at <= now:  # the job drops it as expired on its next run
            raise Conflict(f"pending message {item_id} has expired", code="expired")
        state = {"forward": FORWARDED, "hold": HELD, "reject": REJECTED}[action]
        _close(conn, row, state, actor.username, now)
        station.ledger.record(
            conn,
            actor,
            AUDIT_PREFIX + action,
            target=f"eas_pending:{item_id}",
            details={"header": row.header, "origin": row.origin, "rule": row.rule},
            propagate=True,
        )
        done = conn.execute(select(eas_pending).where(_p.id == item_id)).one()
    if state == FORWARDED and row.origin == "relay":
        _air_relay(station, done, actor)
    return item_as_dict(done)


def _withdrawn(conn: Connection, queue_id: int, now: datetime) -> str:
    """Return why a parked CAP forward can no longer air (cancelled, ended, left the area)."""
    alert_id = conn.execute(select(_q.alert_id).where(_q.id == queue_id)).scalar()
    if alert_id is None:
        return "its alert is gone"
    return refusal(conn, alert_id, now, max_age_minutes=MAX_AGE_LIMIT, forward_events=None, now=now)


def _close(
    conn: Connection, row: Any, state: str, by: str | None, now: datetime, reason: str = ""
) -> None:
    """Move an open item to ``state`` (held keeps it open, without its countdown)."""
    conn.execute(
        update(eas_pending)
        .where(_p.id == row.id)
        .values(
            state=state, air_at=None if state == HELD else row.air_at, decided_by=by, decided_at=now
        )
    )
    _log_decision(conn, row, state, by, now, reason)
    if state == FORWARDED:
        _requeue(conn, row.queue_id, now)
    elif state == WITHDRAWN:
        _skip(conn, row.queue_id, reason)
    elif state in (REJECTED, EXPIRED):
        _skip(conn, row.queue_id, f"{state} on the approval queue" + (f" by {by}" if by else ""))


#: The station-log kind of each approval-queue decision (a withdrawn message never airs).
_LOG_KINDS: Final[dict[str, str]] = {
    HELD: station_log.HELD,
    FORWARDED: station_log.APPROVED,
    REJECTED: station_log.REJECTED,
    EXPIRED: station_log.EXPIRED,
    WITHDRAWN: station_log.REJECTED,
}


def _log_decision(
    conn: Connection, row: Any, state: str, by: str | None, now: datetime, reason: str
) -> None:
    """Log a decision on a waiting message in the transaction that makes it."""
    record_entry(
        conn,
        _LOG_KINDS[state],
        at=now,
        source=row.source,
        header=row.header,
        result=state,
        by=by,
        details={"pending_id": row.id, "origin": row.origin, "rule": row.rule, "reason": reason},
    )


def _air_relay(station: Station, row: Any, actor: Actor) -> None:
    with station.engine.connect() as conn:
        settings = get_forward_settings(conn)
    audio = recorded_audio(station.settings.data_dir, row.audio_path)
    air_received(
        station,
        SameHeader.parse(row.header),
        audio,
        station_rate(station),
        settings,
        actor=actor,
        target=f"eas_pending:{row.id}",
        details={"received_id": row.received_id, "rule": row.rule},
    )


def station_rate(station: Station) -> int:
    """Return the airing sample rate."""
    with station.engine.connect() as conn:
        return airing_settings.load(conn).sample_rate


def run_due(station: Station) -> list[str]:
    """Drop expired items and air holds whose time came; return one line per change."""
    lines: list[str] = []
    relays: list[Any] = []
    with begin_write(station.engine) as conn:
        now = station.clock()
        for row in conn.execute(
            select(eas_pending).where(_p.state.in_(OPEN_STATES), _p.expires_at <= now)
        ).all():
            _close(conn, row, EXPIRED, None, now)
            lines.append(f"pending {row.id} expired: {row.header}")
        for row in conn.execute(
            select(eas_pending).where(_p.state.in_(OPEN_STATES), _p.queue_id.is_not(None))
        ).all():
            reason = _withdrawn(conn, row.queue_id, now)
            if reason:
                _close(conn, row, WITHDRAWN, None, now, reason)
                lines.append(f"pending {row.id} withdrawn ({reason}): {row.header}")
        for row in conn.execute(
            select(eas_pending).where(_p.state == WAITING, _p.air_at.is_not(None), _p.air_at <= now)
        ).all():
            _close(conn, row, FORWARDED, HOLD_ACTOR, now)
            lines.append(f"pending {row.id} forwarded after its hold: {row.header}")
            if row.origin == "relay":
                relays.append(row)
    for row in relays:
        try:
            _air_relay(station, row, Actor.system(HOLD_ACTOR))
        except Exception:  # noqa: BLE001 - one failed relay must not stop the others
            log.exception("relay of pending message %s failed", row.id)
    return lines
