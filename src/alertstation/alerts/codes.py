"""The stored codes of alerts: every code in document order, and the codes still in force.

``cap_alert_geocodes`` keeps each code's place in the message (SAME codes first, then UGC,
each in document order) and its state (docs/alerts-lifecycle.md, "Per-code state").
``alert_codes_of`` is the one reader the alert views, the API and the forwarder use:
``remaining`` are the codes still in force, SAME then UGC, each in document order; it equals
``codes`` until part of the area ends.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection, select, update

from alertstation.alerts import lifecycle
from alertstation.alerts.lifecycle import CodeState
from alertstation.alerts.matching import decode_id
from alertstation.alerts.tables import cap_alert_geocodes

_G = cap_alert_geocodes.c


@dataclass(frozen=True, slots=True)
class AlertCodes:
    """One alert's codes in document order, the ones still in force, and how the others ended."""

    codes: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)
    ended: dict[str, CodeState] = field(default_factory=dict)


def alert_codes_of(conn: Connection, ids: Iterable[int]) -> dict[int, AlertCodes]:
    """Return the codes of each alert (an empty ``AlertCodes`` for an alert without any)."""
    wanted = sorted(set(ids))
    found: dict[int, AlertCodes] = {alert_id: AlertCodes() for alert_id in wanted}
    for start in range(0, len(wanted), 400):
        part = wanted[start : start + 400]
        rows = conn.execute(
            select(_G.alert_id, _G.code_id, _G.state, _G.ended_at, _G.ended_by)
            .where(_G.alert_id.in_(part))
            .order_by(_G.alert_id, _G.position, _G.code_id)
        )
        for row in rows:
            codes = found[row.alert_id]
            code = decode_id(row.code_id)
            codes.codes.append(code)
            if row.state == lifecycle.ACTIVE:
                codes.remaining.append(code)
            else:
                codes.ended[code] = CodeState(row.state, row.ended_at, row.ended_by)
    return found


def remaining_codes(conn: Connection, alert_id: int) -> list[str]:
    """Return the codes of one alert still in force, SAME then UGC, each in document order."""
    return alert_codes_of(conn, [alert_id])[alert_id].remaining


def end_codes(conn: Connection, ids: Iterable[int], state: str, at: datetime) -> None:
    """End every code still in force of these alerts (an operator's change, the expiry sweep)."""
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), 400):
        conn.execute(
            update(cap_alert_geocodes)
            .where(_G.alert_id.in_(wanted[start : start + 400]), _G.state == lifecycle.ACTIVE)
            .values(state=state, ended_at=at)
        )
