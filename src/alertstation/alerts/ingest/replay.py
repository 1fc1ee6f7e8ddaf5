"""Decide stored alerts again from the stored messages: states, code states and area flags.

``replay`` reads what the rules of ``alerts.lifecycle`` need for the given alerts (their VTEC
events with every member's codes, the CAP messages that reference them) and writes what
changed. The operator's expiry change uses it for one alert; the migration that added the
per-code state replays the whole store with it (``ids=None``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, select, tuple_, update

from alertstation.alerts import lifecycle
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.ingest.batch import document_codes
from alertstation.alerts.ingest.sql import IN_CHUNK
from alertstation.alerts.lifecycle import CodeState, Facts, Member
from alertstation.alerts.matching import SAME_SPACE, GeocodeMatcher, decode_id
from alertstation.alerts.model import Alert
from alertstation.alerts.parsing import AlertParseError
from alertstation.alerts.service import get_alert_settings
from alertstation.alerts.tables import (
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)
from alertstation.db.types import utcnow

_A, _V, _G, _R = cap_alerts.c, cap_alert_vtec.c, cap_alert_geocodes.c, cap_alert_refs.c
_KEY = (_V.office, _V.phenomenon, _V.significance, _V.etn, _V.year)
SKIP_REASON = "event ended before it aired"


def _chunks(items: Sequence[Any], size: int = IN_CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _in(conn: Connection, statement: Any, column: Any, keys: Iterable[Any]) -> Iterator[Any]:
    wanted = sorted(set(keys))
    if not wanted:
        return
    for part in _chunks(wanted):
        yield from conn.execute(statement.where(column.in_(part)))


def replay(
    conn: Connection,
    ids: Iterable[int] | None,
    *,
    now: datetime,
    area: GeocodeMatcher | None = None,
    match_polygons: bool = False,
) -> int:
    """Decide the given alerts (every stored one with ``ids`` None) again; return the changed.

    With ``area`` the broadcast-area flags (``in_area``, ``match_code``) follow the codes still
    in force. Pending forward-queue entries of alerts that ended are skipped. The caller bumps
    the ``alerts`` generation.
    """
    header = select(
        _A.id, _A.sender, _A.identifier, _A.sent, _A.msg_type, _A.expires, _A.state,
        _A.cancelled_at, _A.in_area, _A.match_code, _A.match_geometry,
    )  # fmt: skip
    if ids is None:
        rows = list(conn.execute(header))
    else:
        rows = list(_in(conn, header, _A.id, ids))
    if not rows:
        return 0
    wanted = [row.id for row in rows]
    keys: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    actions: dict[int, list[str]] = defaultdict(list)
    vtec = select(_V.alert_id, _V.action, *_KEY).order_by(_V.alert_id, _V.position)
    own = list(conn.execute(vtec) if ids is None else _in(conn, vtec, _V.alert_id, wanted))
    for row in own:
        keys[row.alert_id].append(tuple(row[2:]))
        actions[row.alert_id].append(row.action)
    members: dict[tuple[Any, ...], list[tuple[int, str, datetime, str]]] = defaultdict(list)
    chains = select(_V.alert_id, _A.identifier, _A.sent, _V.action, *_KEY).join(
        cap_alerts, _A.id == _V.alert_id
    )
    event_keys = {key for found in keys.values() for key in found}
    if ids is None:
        found_members = conn.execute(chains)
    else:
        found_members = _in(conn, chains, tuple_(*_KEY), event_keys)
    for row in found_members:
        members[tuple(row[4:])].append((row.alert_id, row.identifier, row.sent, row.action))
    member_ids = {m[0] for found in members.values() for m in found} | set(wanted)
    codes: dict[int, list[tuple[int, CodeState]]] = defaultdict(list)
    geocodes = select(_G.alert_id, _G.code_id, _G.state, _G.ended_at, _G.ended_by).order_by(
        _G.alert_id, _G.position, _G.code_id
    )
    found_codes = (
        conn.execute(geocodes) if ids is None else _in(conn, geocodes, _G.alert_id, member_ids)
    )
    for row in found_codes:
        codes[row.alert_id].append((row.code_id, CodeState(row.state, row.ended_at, row.ended_by)))
    ugc = {
        alert_id: tuple(decode_id(c) for c, _s in found if c >= SAME_SPACE)
        for alert_id, found in codes.items()
    }
    events = {
        key: lifecycle.event_code_states(
            Member(alert_id, name, sent, action, ugc.get(alert_id, ()))
            for alert_id, name, sent, action in found
        )
        for key, found in members.items()
    }
    referrers = _referrers(conn, rows, all_rows=ids is None)
    changed = 0
    ended: list[int] = []
    for row in rows:
        own_codes = codes.get(row.id, [])
        facts = Facts(
            row.id, row.sender, row.identifier, row.sent, row.msg_type, row.expires,
            tuple(keys.get(row.id, ())), tuple(actions.get(row.id, ())), ugc.get(row.id, ()),
            tuple(decode_id(c) for c, _s in own_codes if c < SAME_SPACE),
        )  # fmt: skip
        updated, cancelled_by = lifecycle.referred(referrers.get((row.sender, row.identifier), ()))
        outcome = lifecycle.outcome(
            facts, events, updated=updated, cancelled_by=cancelled_by, now=now
        )
        changed += _write(conn, row, own_codes, outcome, area, match_polygons, now)
        if outcome.verdict.state in (lifecycle.CANCELLED, lifecycle.EXPIRED):
            ended.append(row.id)
    for part in _chunks(sorted(ended)):
        conn.execute(
            update(eas_forward_queue)
            .where(eas_forward_queue.c.alert_id.in_(part), eas_forward_queue.c.state == "pending")
            .values(state="skipped", reason=SKIP_REASON)
        )
    return changed


def _referrers(
    conn: Connection, rows: Sequence[Any], *, all_rows: bool
) -> dict[tuple[str, str], list[tuple[str, datetime]]]:
    """(msg_type, sent) of each message without VTEC that references one of ``rows``."""
    referrer = cap_alerts.alias("referrer")
    vx = cap_alert_vtec.alias("vx")
    decides = (
        ~select(vx.c.alert_id)
        .where(vx.c.alert_id == _R.alert_id, vx.c.action != lifecycle.ROUTINE)
        .exists()
    )
    statement = (
        select(_R.ref_sender, _R.ref_identifier, referrer.c.msg_type, referrer.c.sent)
        .join(referrer, referrer.c.id == _R.alert_id)
        .where(decides)
    )
    found: dict[tuple[str, str], list[tuple[str, datetime]]] = defaultdict(list)
    source = (
        conn.execute(statement)
        if all_rows
        else _in(conn, statement, _R.ref_identifier, {row.identifier for row in rows})
    )
    for row in source:
        found[(row.ref_sender, row.ref_identifier)].append((row.msg_type, row.sent))
    return found


_UPDATE_CODE = update(cap_alert_geocodes).where(
    _G.alert_id == bindparam("b_alert"), _G.code_id == bindparam("b_code")
)


def _write(
    conn: Connection,
    row: Any,
    own_codes: list[tuple[int, CodeState]],
    outcome: lifecycle.Outcome,
    area: GeocodeMatcher | None,
    match_polygons: bool,
    now: datetime,
) -> int:
    """Write one alert's changes; return 1 when anything changed."""
    code_changes = []
    states = {}
    for code_id, before in own_codes:
        after = outcome.codes[decode_id(code_id)]
        states[code_id] = after
        if after != before:
            code_changes.append(
                {
                    "b_alert": row.id,
                    "b_code": code_id,
                    "state": after.state,
                    "ended_at": after.ended_at,
                    "ended_by": after.ended_by,
                }
            )
    if code_changes:
        conn.execute(_UPDATE_CODE, code_changes)
    values: dict[str, Any] = {}
    verdict = outcome.verdict
    if (verdict.state, verdict.cancelled_at) != (row.state, row.cancelled_at):
        values.update(state=verdict.state, cancelled_at=verdict.cancelled_at)
    if area is not None and code_changes:
        live = [decode_id(c) for c, s in states.items() if s.state == lifecycle.ACTIVE]
        by_code = area.matches(live or [decode_id(c) for c, _s in own_codes])
        in_area = by_code or (match_polygons and bool(row.match_geometry))
        if (in_area, by_code) != (bool(row.in_area), bool(row.match_code)):
            values.update(in_area=in_area, match_code=by_code)
    if values:
        conn.execute(update(cap_alerts).where(_A.id == row.id).values(**values, updated_at=now))
    return 1 if values or code_changes else 0


def replay_store(conn: Connection, *, now: datetime | None = None) -> int:
    """Put every stored code in document order and replay every stored alert's state.

    The order comes from each stored message (its SAME codes, then its UGC codes); a message
    that no longer parses keeps its codes in id order. Returns the alerts changed.
    """
    stored: dict[int, list[int]] = defaultdict(list)
    for row in conn.execute(select(_G.alert_id, _G.code_id).order_by(_G.alert_id, _G.code_id)):
        stored[row.alert_id].append(row.code_id)
    positions = []
    several = [alert_id for alert_id, codes in stored.items() if len(codes) > 1]
    for row in _in(conn, select(_A.id, _A.identifier, _A.raw), _A.id, several):
        order: list[int] = []
        try:
            parsed = [a for a in parse_any(row.raw) if isinstance(a, Alert)]
        except (AlertParseError, ValueError):
            parsed = []
        chosen = next((a for a in parsed if a.identifier == row.identifier), None)
        if chosen is not None:
            order = document_codes([chosen])[0]
        known = set(stored[row.id])
        ranked = [c for c in order if c in known]
        ranked += [c for c in stored[row.id] if c not in set(ranked)]
        positions += [
            {"b_alert": row.id, "b_code": code_id, "position": position}
            for position, code_id in enumerate(ranked)
        ]
    if positions:
        conn.execute(_UPDATE_CODE, positions)
    settings = get_alert_settings(conn).matchers()
    return replay(
        conn, None, now=now or utcnow(), area=settings.area, match_polygons=settings.match_polygons
    )
