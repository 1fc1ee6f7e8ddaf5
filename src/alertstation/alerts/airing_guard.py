"""The airing-time guard of auto-forward: may this queued alert still go on the air?

The alert store's own guard (:func:`alertstation.alerts.lifecycle.forward_refusal`) decided
that the alert could be queued. Between queueing and airing the world moves on: a
cancellation arrives, the alert expires, the operator narrows the area or the forwarded events.
:func:`refusal` asks the store's guard again, with the alert's stored facts as they are now,
and adds what only time can tell:

* the entry waited longer than ``max_age_minutes``;
* the alert is past its ``expires`` (even before the expiry sweep marked it);
* the alert is no longer live: cancelled or expired, or superseded by a message that ended its
  event. A NEW superseded by a CON (or an alert superseded by a CAP Update) whose event is
  still live does air: the public has not heard it yet;
* every VTEC chain through which it was forwarded (its NEW, EXA or EXB) is terminal: a CAN,
  EXP or UPG ended it;
* codes of the alert ended (a partial cancel) and none of the broadcast area's remain.

Nothing here writes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import Connection, and_, func, or_, select, tuple_

from alertstation.alerts import lifecycle
from alertstation.alerts.codes import alert_codes_of
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.matching import decode_id
from alertstation.alerts.model import Alert
from alertstation.alerts.parsing import AlertParseError
from alertstation.alerts.tables import (
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
)
from alertstation.alerts.vtec import Vtec

log = logging.getLogger("alertstation.eas")

#: Why a forward whose alert lost the broadcast area's codes (a partial cancel) is dropped.
NO_CODES_REASON: Final[str] = "none of the broadcast area's codes remain in force"
#: How far a chain of CAP Updates is followed to find a live successor.
MAX_UPDATE_DEPTH: Final[int] = 8

_a = cap_alerts.c
_v = cap_alert_vtec.c
_KEY = (_v.office, _v.phenomenon, _v.significance, _v.etn, _v.year)


def refusal(
    conn: Connection,
    alert_id: int,
    queued_at: datetime,
    *,
    max_age_minutes: int,
    forward_events: Iterable[str] | None,
    now: datetime,
) -> str:
    """Return why the queued alert ``alert_id`` must not air now, or "" when it may.

    Plain values only (the alert, when it was queued, the forward settings' age limit and
    events), so the alert store answers without knowing who forwards.
    """
    if now - queued_at > timedelta(minutes=max_age_minutes):
        return f"waited longer than {max_age_minutes} min in the queue"
    alert = conn.execute(select(cap_alerts).where(_a.id == alert_id)).one()
    vtec_rows = conn.execute(
        select(cap_alert_vtec).where(_v.alert_id == alert.id).order_by(_v.position)
    ).all()
    dead = _not_live(conn, alert, vtec_rows, now)
    if dead:
        return dead
    ended = _ended_codes(conn, alert.id)
    if ended and not alert.in_area:
        return f"{NO_CODES_REASON} ({ended} ended)"
    model = Alert(
        identifier=alert.identifier,
        sender=alert.sender,
        sent=alert.sent,
        status=alert.status,
        msg_type=alert.msg_type,
        event_code=alert.event_code,
        vtec=tuple(_vtec(row) for row in vtec_rows),
    )
    reason = lifecycle.forward_refusal(
        model, state=lifecycle.ACTIVE, in_area=bool(alert.in_area), events=forward_events
    )
    if reason:
        return reason
    forwarded = [row for row in vtec_rows if row.action in lifecycle.FORWARD_ACTIONS]
    if forwarded and all(_chain_terminal(conn, row) for row in forwarded):
        return "its VTEC event has ended (CAN, EXP or UPG in the chain)"
    return ""


def _vtec(row: Any) -> Vtec:
    return Vtec(
        row.product_class,
        row.action,
        row.office,
        row.phenomenon,
        row.significance,
        row.etn,
        row.begin,
        row.end,
    )


def _expired(row: Any, now: datetime) -> bool:
    return row.expires is not None and row.expires <= now


def _not_live(conn: Connection, alert: Any, vtec_rows: list[Any], now: datetime) -> str:
    """Return why the alert's event is over, or "" while it lives."""
    if alert.state not in (lifecycle.ACTIVE, lifecycle.SUPERSEDED):
        return f"alert is {alert.state}"
    if _expired(alert, now):
        return "alert has expired"
    if alert.state == lifecycle.ACTIVE:
        return ""
    forwarded = [row for row in vtec_rows if row.action in lifecycle.FORWARD_ACTIONS]
    if forwarded:
        live = any(_chain_live(conn, row, now) for row in forwarded)
    else:
        live = _update_live(conn, alert, now, MAX_UPDATE_DEPTH, set())
    return "" if live else "alert is superseded and its event has ended"


def _chain_key(row: Any) -> Any:
    return and_(*(column == getattr(row, column.key) for column in _KEY))


def _chain_terminal(conn: Connection, row: Any) -> bool:
    found = conn.execute(
        select(_v.alert_id).where(_chain_key(row), _v.chain_terminal.is_(True)).limit(1)
    ).first()
    return found is not None


def _chain_live(conn: Connection, row: Any, now: datetime) -> bool:
    """Tell whether a VTEC chain is not terminal and has an active, unexpired member."""
    if _chain_terminal(conn, row):
        return False
    found = conn.execute(
        select(_a.id)
        .join(cap_alert_vtec, _v.alert_id == _a.id)
        .where(
            _chain_key(row),
            _a.state == lifecycle.ACTIVE,
            or_(_a.expires.is_(None), _a.expires > now),
        )
        .limit(1)
    ).first()
    return found is not None


def _update_live(conn: Connection, alert: Any, now: datetime, depth: int, seen: set[int]) -> bool:
    """Tell whether a CAP Update that supersedes ``alert`` (directly or further on) is live."""
    seen.add(alert.id)
    if depth <= 0:
        return False
    r = cap_alert_refs.c
    successors = conn.execute(
        select(_a.id, _a.state, _a.expires, _a.sender, _a.identifier)
        .join(cap_alert_refs, r.alert_id == _a.id)
        .where(
            r.ref_sender == alert.sender,
            r.ref_identifier == alert.identifier,
            _a.msg_type == "Update",
        )
    ).all()
    for successor in successors:
        if successor.id in seen or _expired(successor, now):
            continue
        if successor.state == lifecycle.ACTIVE:
            return True
        if successor.state == lifecycle.SUPERSEDED and _update_live(
            conn, successor, now, depth - 1, seen
        ):
            return True
    return False


def alert_codes(conn: Connection, alert_id: int) -> list[str]:
    """Return the codes an alert's forward may still name, SAME then UGC in document order.

    Those are its codes still in force, and the codes a later product of its VTEC events
    continued that are still in force there (a NEW superseded by a CON airs for the area the
    event still covers). A forward's header is rendered from them when it is taken and again
    just before it airs, so codes that ended meanwhile (a partial cancel) are left out.
    """
    found = alert_codes_of(conn, [alert_id])[alert_id]
    continued = {code for code, s in found.ended.items() if s.state == lifecycle.SUPERSEDED}
    if not continued:
        return found.remaining
    keys = select(*_KEY).where(_v.alert_id == alert_id)
    g = cap_alert_geocodes.c
    live = {
        decode_id(code_id)
        for code_id in conn.execute(
            select(g.code_id)
            .join(cap_alert_vtec, _v.alert_id == g.alert_id)
            .where(tuple_(*_KEY).in_(keys), g.state == lifecycle.ACTIVE)
        ).scalars()
    }
    remaining = set(found.remaining)
    return [c for c in found.codes if c in remaining or (c in continued and c in live)]


def _ended_codes(conn: Connection, alert_id: int) -> int:
    """Return how many of an alert's codes have ended."""
    g = cap_alert_geocodes.c
    found = conn.execute(
        select(func.count())
        .select_from(cap_alert_geocodes)
        .where(g.alert_id == alert_id, g.state != lifecycle.ACTIVE)
    ).scalar_one()
    return int(found)


def description_of(raw: str, identifier: str) -> str:
    """Return the description of the stored message (its primary info block), or ""."""
    if not raw:
        return ""
    try:
        parsed = parse_any(raw)
    except (AlertParseError, ValueError) as ex:
        log.warning("auto-forward: cannot read the description of %s: %s", identifier, ex)
        return ""
    alerts = [item for item in parsed if isinstance(item, Alert)]
    chosen = next((item for item in alerts if item.identifier == identifier), None)
    if chosen is None and alerts:
        chosen = alerts[0]
    return chosen.description if chosen is not None else ""
